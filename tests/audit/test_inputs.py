"""Audits that rest on inputs which exercise the model, and say what they could not establish.

The exports under tests/exports are what users audit: an INT4 stateful llama, a BERT encoder, a T5 decoder
(optimum-intel), a TorchScript module whose Loop trip count is an input. Token ids come from the range the
embedding gathers from (the vocabulary size of the export's config.json), masks are ones, positions count up,
a trip count is small; a reduction whose captured input cannot show an error (constant, zeros, non-finite,
empty) is "not established", and a reduction inside a body is listed as not audited, never passed over.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import openvino as ov
import pytest
from openvino import opset13 as ops

from ovreduce.audit import audit_model
from ovreduce.check import check_model
from ovreduce.errors import InputError
from ovreduce.ir.parser import load_ir
from ovreduce.reports.audit import AuditDocument
from ovreduce.run import run_layer
from ovreduce.shapes import PartialShape
from tests.cli.inprocess import run_cli

EXPORTS = Path(__file__).resolve().parents[1] / "exports"


def _audit(path: Path, **options: object) -> AuditDocument:
    model = load_ir(path)
    try:
        return audit_model(model, **options)  # type: ignore[arg-type]
    finally:
        model.close()


def _origin(doc: AuditDocument, name: str) -> str:
    return next(i.origin for i in doc.inputs if i.name == name)


def test_llm_token_ids_come_from_its_vocabulary() -> None:
    config = json.loads((EXPORTS / "llama_int4" / "config.json").read_text())
    doc = _audit(EXPORTS / "llama_int4" / "openvino_model.xml", precision="f32")
    assert doc.error is None
    assert f"ids in [0, {config['vocab_size']})" in _origin(doc, "input_ids")
    assert _origin(doc, "attention_mask").startswith("ones")
    assert _origin(doc, "position_ids").startswith("positions")
    assert _origin(doc, "beam_idx").startswith("arange")
    # a sequence of PROMPT_TOKENS made-up tokens, the mask and positions along it
    shapes = {i.name: tuple(i.shape) for i in doc.inputs}
    assert shapes == {"input_ids": (1, 8), "attention_mask": (1, 8), "position_ids": (1, 8), "beam_idx": (1,)}
    assert doc.complete  # every reduction, the ReduceProd over the shape [1, 8] included, was established
    norms = [layer for layer in doc.layers if layer.type == "ReduceMean"]
    assert len(norms) == 5  # one per RMSNorm
    # every RMSNorm reduced a real activation (not the zeros an out-of-vocabulary id gathers), within tolerance
    assert all(layer.status == "ok" and layer.not_established is None for layer in norms), norms


def test_token_type_ids_and_masks_of_an_encoder() -> None:
    config = json.loads((EXPORTS / "bert_encoder" / "config.json").read_text())
    doc = _audit(EXPORTS / "bert_encoder" / "openvino_model.xml", precision="f32")
    assert f"ids in [0, {config['vocab_size']})" in _origin(doc, "input_ids")
    assert f"ids in [0, {config['type_vocab_size']})" in _origin(doc, "token_type_ids")
    assert _origin(doc, "attention_mask").startswith("ones")


def test_a_seq2seq_decoder_gets_a_mask_of_ones_and_its_beams_in_order() -> None:
    doc = _audit(EXPORTS / "t5_seq2seq" / "openvino_decoder_model.xml", precision="f32")
    assert doc.error is None
    assert _origin(doc, "encoder_attention_mask").startswith("ones")
    shapes = {i.name: tuple(i.shape) for i in doc.inputs}
    # the decoder's tokens are a sequence; the encoder's mask follows the encoder's output, not them
    assert shapes["input_ids"] == (1, 8) and shapes["encoder_attention_mask"][1] == shapes["encoder_hidden_states"][1]
    assert _origin(doc, "beam_idx").startswith("arange")
    assert any(layer.status == "ok" for layer in doc.layers)


def _parameter(shape: list[int], etype: type, name: str) -> Any:
    """A Parameter whose tensor is named ``name``, as optimum's exports name their inputs."""
    node = ops.parameter(shape, etype, name=name)
    node.output(0).set_names({name})
    return node


def _stateless_llm() -> tuple[Any, Any, Any, Any, Any]:
    """An export with its past keys as inputs (optimum's --disable-stateful): the ids, mask, positions and past
    Parameters, and a mean of the keys over the past and the new tokens."""
    ids, mask = ops.parameter([-1, -1], np.int64, name="input_ids"), ops.parameter([-1, -1], np.int64, name="mask")
    positions, past = ops.parameter([-1, -1], np.int64, name="pos"), ops.parameter([-1, 2, -1, 4], np.float32)
    for node, name in ((ids, "input_ids"), (mask, "attention_mask"), (positions, "position_ids"),
                       (past, "past_key_values.0.key")):  # fmt: skip
        node.output(0).set_names({name})
    table = ops.constant(np.random.default_rng(0).standard_normal((50, 8)).astype(np.float32))
    new = ops.transpose(ops.reshape(ops.gather(table, ids, ops.constant(np.int64(0))),
                                    ops.constant(np.array([0, 0, 2, 4], np.int64)), True),
                        ops.constant(np.array([0, 2, 1, 3], np.int64)))  # fmt: skip
    keys = ops.reduce_mean(ops.concat([past, new], 2), ops.constant(np.array([2], np.int64)), False, name="keys")
    return ids, mask, positions, past, keys


def test_the_past_of_an_llm_exported_without_state_is_empty_as_its_mask_and_positions_say(tmp_path: Path) -> None:
    """An export with past keys as inputs (optimum's --disable-stateful): a past of 1 beside a mask as long as the ids
    and positions from 0 is no state generation makes. The past is empty, the first step, and the document says so."""
    ids, mask, positions, past, keys = _stateless_llm()
    seen = ops.reduce_sum(ops.convert(ops.add(mask, positions), "f32"), ops.constant(np.array([1], np.int64)), False)
    ov.save_model(ov.Model([keys, seen], [ids, mask, positions, past]), tmp_path / "m.xml", compress_to_fp16=False)
    doc = _audit(tmp_path / "m.xml", precision="f32")
    shapes = {i.name: tuple(i.shape) for i in doc.inputs}
    assert doc.error is None and shapes["past_key_values.0.key"] == (1, 2, 0, 4), shapes
    assert shapes["attention_mask"] == shapes["position_ids"] == shapes["input_ids"] == (1, 8), shapes
    assert any("past key and value inputs (past_key_values.0.key...) are empty" in note for note in doc.notes)
    assert all(layer.status == "ok" for layer in doc.layers), doc.layers


def test_a_trip_count_input_is_small_and_body_reductions_are_audited_or_listed() -> None:
    path = EXPORTS / "loop_trip_count" / "model.xml"
    x = np.random.default_rng(5).uniform(0.5, 1.5, (4, 8)).astype(np.float32)  # positive: the If takes "then"
    doc = _audit(path, precision="f32", inputs={"x.1": x})
    assert doc.error is None
    assert _origin(doc, "n.1") == "3 (the trip count of Loop 'prim::Loop/Loop')"
    model = load_ir(path)
    try:
        checked = check_model(model)
    finally:
        model.close()
    in_bodies = {(r.body_path, r.layer_id) for r in checked.reductions if r.body_path is not None}
    assert in_bodies == {("3/body", "4"), ("10/then", "4"), ("10/else", "3")}
    rows = {(layer.body_path, layer.layer_id): layer for layer in doc.layers}
    assert set(rows) >= in_bodies
    # the If's condition (a sum of x > 0, true here) took the then body: its ReduceMax was audited, run alone
    # on what the If gave it; the else body did not run; the Loop's body runs per iteration
    taken = rows["10/then", "4"]
    assert taken.status == "ok" and taken.total is not None and taken.total > 0, taken
    assert any("run alone on the values the If gave it" in note for note in taken.notes)
    assert rows["10/else", "3"].status == "not-audited"
    assert "which did not run: the condition was true; a run of layer `10/else/3` runs it" in (
        rows["10/else", "3"].not_established or ""
    )
    loop = rows["3/body", "4"]
    assert loop.status == "not-audited" and "a run of layer `3/body/4` runs it on its own" in (
        loop.not_established or ""
    )
    assert doc.ok and not doc.complete
    assert doc.coverage["reductions"] == len(doc.layers) == 4 and doc.coverage["not-audited"] == 2


@pytest.mark.parametrize("pick", ["Gather", "ReduceMax", "Split"])
def test_a_trip_count_indexed_out_of_an_input_is_small(tmp_path: Path, pick: str) -> None:
    """TorchScript's ``range(int(n[0]))``: the count is read out of an input vector. Made at random (+-2**20), seed 1
    makes it negative, and the Loop runs until the time limit; it is made a trip count, 3."""
    x, n = _parameter([2, 16], np.float32, "x"), _parameter([1], np.int64, "n")
    axis = ops.constant(np.int64(0))
    trip = {"Gather": lambda: ops.gather(n, axis, axis), "ReduceMax": lambda: ops.reduce_max(n, axis, False),
            "Split": lambda: ops.squeeze(ops.split(n, axis, 1).output(0), axis)}[pick]()  # fmt: skip
    inner = ops.parameter([2, 16], np.float32)
    step = ops.subtract(inner, ops.reduce_mean(inner, ops.constant(np.array([-1], np.int64)), True, name="body_mean"))
    body = ov.Model([ops.result(ops.constant(True)), ops.result(step)], [inner], "body")
    loop = ops.loop(trip, ops.constant(True))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 0])
    loop.set_merged_input(inner, x.output(0), body.get_results()[1].input_value(0))
    total = ops.reduce_sum(loop.get_iter_value(body.get_results()[1].output(0), -1), axis, False, name="top_sum")
    ov.save_model(ov.Model([total], [x, n], "m"), tmp_path / "m.xml", compress_to_fp16=False)
    doc = _audit(tmp_path / "m.xml", precision="f32", seed=1, timeout=60.0)
    assert doc.error is None
    assert _origin(doc, "n").startswith("3 (the trip count of Loop "), _origin(doc, "n")


@pytest.mark.parametrize("compare", ["Less", "Greater", "NotEqual"])
def test_a_bound_of_a_loop_condition_is_a_small_count(tmp_path: Path, compare: str) -> None:
    """TorchScript's ``while i < n``: trip count -1, the execution condition ``Less(0, n)`` outside the Loop and
    ``Less(i + 1, n)`` in its body. Made at random (+-2**20), ``n`` ran the Loop up to a million times per run; it is
    made a count, 3, and OpenVINO's Loop runs 3 iterations on it."""
    x, n = _parameter([2, 16], np.float32, "x"), _parameter([], np.int64, "n")
    inner, counter, bound = ops.parameter([2, 16], np.float32), ops.parameter([], np.int64), ops.parameter([], np.int64)
    step = ops.subtract(inner, ops.reduce_mean(inner, ops.constant(np.array([-1], np.int64)), True, name="body_mean"))
    following = ops.add(counter, ops.constant(np.int64(1)))
    go_on = {"Less": lambda: ops.less(following, bound), "Greater": lambda: ops.greater(bound, following),
             "NotEqual": lambda: ops.not_equal(following, bound)}[compare]()  # fmt: skip
    body = ov.Model([ops.result(go_on), ops.result(step), ops.result(following)], [inner, counter, bound], "body")
    loop = ops.loop(ops.constant(np.int64(-1)), ops.logical_and(ops.less(ops.constant(np.int64(0)), n),
                                                                 ops.constant(True)))  # fmt: skip
    loop.set_function(body)
    loop.set_special_body_ports([-1, 0])
    loop.set_merged_input(inner, x.output(0), body.get_results()[1].input_value(0))
    loop.set_merged_input(counter, ops.constant(np.int64(0)).output(0), body.get_results()[2].input_value(0))
    loop.set_invariant_input(bound, n.output(0))
    axis = ops.constant(np.int64(0))
    total = ops.reduce_sum(loop.get_iter_value(body.get_results()[1].output(0), -1), axis, False, name="top_sum")
    iterations = ops.result(loop.get_iter_value(body.get_results()[2].output(0), -1))
    ov.save_model(ov.Model([ops.result(total), iterations], [x, n], "m"), tmp_path / "m.xml", compress_to_fp16=False)
    doc = _audit(tmp_path / "m.xml", precision="f32", seed=1, timeout=60.0)
    assert doc.error is None
    assert _origin(doc, "n").startswith("3 (a bound of the execution condition of Loop "), _origin(doc, "n")
    request = ov.Core().compile_model(str(tmp_path / "m.xml"), "CPU").create_infer_request()
    ran = request.infer({"x": np.ones((2, 16), np.float32), "n": np.array(3, np.int64)})[1]
    assert int(ran) == 3


def _zeros_model(path: Path) -> Path:
    x = ops.parameter([4, 8], np.float32, name="x")
    x.output(0).set_names({"x"})
    zeros = ops.multiply(x, ops.constant(np.zeros((1, 8), np.float32)), name="times_zero")
    dead = ops.reduce_mean(zeros, ops.constant(np.array([1], np.int64)), True, name="mean_of_zeros")
    live = ops.reduce_sum(x, ops.constant(np.array([1], np.int64)), True, name="sum_of_x")
    ov.save_model(ov.Model([ops.add(dead, live, name="out")], [x], "zeros"), path, compress_to_fp16=False)
    return path


def test_a_reduction_of_zeros_is_not_established(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _zeros_model(tmp_path / "m.xml")
    doc = _audit(path, precision="f32")
    rows = {layer.layer_name: layer for layer in doc.layers}
    assert rows["sum_of_x"].status == "ok"
    assert rows["mean_of_zeros"].status == "not-established"
    assert rows["mean_of_zeros"].not_established == "every one of its 32 input elements is 0.0"
    assert doc.ok and not doc.complete and doc.coverage == {"reductions": 2, "ok": 1, "not-established": 1}
    assert [layer.layer_name for layer in doc.layers] == ["sum_of_x", "mean_of_zeros"]  # established rows first
    status, out, _ = run_cli(capsys, "audit", str(path), "--precision", "f32")
    assert status == 0  # nothing failed; the verdict says what was not established
    assert "coverage is partial: 1 of 2 reductions established within tolerance; 1 not established" in out
    assert "mean_of_zeros: not established: every one of its 32 input elements is 0.0" in out


def test_non_finite_inputs_establish_nothing(tmp_path: Path) -> None:
    path = _zeros_model(tmp_path / "m.xml")
    x = np.ones((4, 8), np.float32)
    x[1, 2] = np.inf
    doc = _audit(path, precision="f32", inputs={"x": x})
    row = next(layer for layer in doc.layers if layer.layer_name == "sum_of_x")
    assert row.status == "not-established" and row.not_established == "1 of its 32 input elements are not finite"


def test_a_constant_input_that_still_shows_an_error_establishes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """200 summed in u8: where the CPU saturates and the reference wraps, a constant input shows an error, which
    is then established: the row is an error and not also "not established"."""
    from tests.cpu import cpu_output

    x = ops.parameter([2, 3, 4], np.uint8, name="x")
    red = ops.reduce_sum(x, ops.constant(np.array([1], np.int64)), False, name="red")
    ov.save_model(ov.Model([red], [x], "u8"), tmp_path / "m.xml", compress_to_fp16=False)
    data = np.full((2, 3, 4), 200, np.uint8)
    wraps = bool(np.all(cpu_output("ReduceSum", "u8", data, [1], False) == np.uint8(600 % 256)))
    doc = _audit(tmp_path / "m.xml", inputs={"x": data})
    [row] = doc.layers
    if wraps:  # this CPU computes what the reference does: nothing to establish on a constant input
        assert row.status == "not-established" and row.not_established, row
    else:
        assert row.status == "error" and row.not_established is None, row
        status, out, _ = run_cli(capsys, "audit", str(tmp_path / "m.xml"), "--input", f"x={_npy(tmp_path)}")
        assert status == 1 and "not established" not in out, out


def _npy(folder: Path) -> Path:
    np.save(folder / "x.npy", np.full((2, 3, 4), 200, np.uint8))
    return folder / "x.npy"


def test_slices_of_one_element_or_one_value_establish_nothing(tmp_path: Path) -> None:
    """A dynamic dim the audit sets to 1, reduced: each output is its one input element, and the row was ok (the
    audit complete); so was a max over a broadcast row. Given a real size, the same reduction is established."""
    x = ops.parameter([-1, -1, 16], np.float32, name="x")
    mean = ops.reduce_mean(x, ops.constant(np.array([1], np.int64)), True, name="mean")
    y = ops.parameter([2, 1], np.float32, name="y")
    wide = ops.multiply(y, ops.constant(np.ones((1, 8), np.float32)))
    peak = ops.reduce_max(wide, ops.constant(np.array([1], np.int64)), False, name="peak")
    ov.save_model(ov.Model([mean, peak], [x, y]), tmp_path / "m.xml", compress_to_fp16=False)
    rows = {row.layer_name: row for row in _audit(tmp_path / "m.xml", precision="f32").layers}
    assert rows["mean"].status == "not-established", rows["mean"]
    assert "each output element reduces one input element (axes [1] of input shape [1, 1, 16])" in (
        rows["mean"].not_established or ""
    )
    assert rows["peak"].status == "not-established"
    assert "each slice it reduces holds one repeated value (axes [1] of input shape [2, 8])" in (
        rows["peak"].not_established or ""
    )
    from ovreduce.shapes import PartialShape

    sized = _audit(tmp_path / "m.xml", precision="f32", shapes={"x": PartialShape.parse("[2,5,16]")})
    assert {row.layer_name: row.status for row in sized.layers}["mean"] == "ok"


def test_a_given_past_is_covered_by_the_mask_and_followed_by_the_positions(tmp_path: Path) -> None:
    """Past keys and values given to an export without state (a later step, as the note on an empty past advises):
    the mask made was as long as the new tokens, and their positions began at 0, a step no generation runs."""
    ids, mask, positions, past, keys = _stateless_llm()
    attended = ops.reduce_sum(ops.convert(mask, "f32"), ops.constant(np.array([1], np.int64)), False, name="attended")
    at = ops.reduce_max(ops.convert(positions, "f32"), ops.constant(np.array([1], np.int64)), False, name="at")
    ov.save_model(ov.Model([keys, attended, at], [ids, mask, positions, past]), tmp_path / "m.xml")
    given = {"input_ids": np.array([[3, 7]]), "past_key_values.0.key": np.ones((1, 2, 5, 4), np.float32)}
    doc = _audit(tmp_path / "m.xml", precision="f32", inputs=given)
    shapes = {i.name: tuple(i.shape) for i in doc.inputs}
    assert shapes["attention_mask"] == (1, 7) and shapes["position_ids"] == (1, 2), shapes
    assert _origin(doc, "position_ids") == "positions 5.. after the 5 past positions given"
    from ovreduce.backends.openvino import model_inputs, read_model

    probe = read_model(tmp_path / "m.xml")
    arrays, _, _ = model_inputs(probe, given, 0)
    fed = {port.get_any_name(): arrays[i] for i, port in enumerate(probe.inputs)}
    assert fed["position_ids"].tolist() == [[5, 6]] and fed["attention_mask"].tolist() == [[1] * 7], fed
    assert not any("describe no one text" in note for note in doc.notes), doc.notes
    longer = _audit(tmp_path / "m.xml", precision="f32", inputs={**given, "attention_mask": np.ones((1, 7), np.int64)})
    assert not any("describe no one text" in note for note in longer.notes), longer.notes  # the mask a step has


def test_a_past_given_for_some_layers_is_the_length_of_the_others() -> None:
    """A past given for one layer of two (an export without state): the mask covered it and the positions followed
    it, while the other layer's past was made empty and a note called that the first step of generation, which the
    mask and positions described. No step of generation has layers of different pasts."""
    from ovreduce.backends.openvino import model_inputs

    ids, mask, positions, past, keys = _stateless_llm()
    other = ops.parameter([-1, 2, -1, 4], np.float32, name="other")
    other.output(0).set_names({"past_key_values.1.key"})
    seen = ops.reduce_mean(other, ops.constant(np.array([2], np.int64)), False)
    model = ov.Model([keys, seen], [ids, mask, positions, past, other])
    _, described, notes = model_inputs(model, {"past_key_values.0.key": np.ones((1, 2, 3, 4), np.float32)}, 0)
    shapes = {i.name: tuple(i.shape) for i in described}
    assert shapes["past_key_values.1.key"] == (1, 2, 3, 4) and shapes["attention_mask"] == (1, 11), shapes
    assert not any("first step of generation" in note for note in notes), notes
    assert any("past key and value inputs not given (past_key_values.1.key...) are made of seeded values" in note
               for note in notes), notes  # fmt: skip


def test_logical_reductions_whose_every_slice_holds_the_deciding_value_twice_establish_nothing(tmp_path: Path) -> None:
    """Each slice holding two Falses or more, every AND is False, and stays so whichever one element a kernel misses:
    the row was ok. The OR of the same input, one of whose slices holds its one True, is established."""
    flags = ops.parameter([4, 6], bool, name="flags")
    every = ops.reduce_logical_and(flags, ops.constant(np.array([1])), False, name="every")
    some = ops.reduce_logical_or(flags, ops.constant(np.array([1])), False, name="some")
    ov.save_model(ov.Model([every, some], [flags]), tmp_path / "m.xml")
    data = np.ones((4, 6), bool)
    data[:, 2] = data[:, 4] = False  # two Falses in each row
    data[3] = False
    data[3, 5] = True  # and a row whose OR its one True decides
    rows = {row.layer_name: row for row in _audit(tmp_path / "m.xml", inputs={"flags": data}).layers}
    assert rows["every"].status == "not-established", rows["every"]
    assert rows["every"].not_established == (
        "each slice it reduces (axes [1] of input shape [4, 6]) holds False twice or more: every output element is "
        "False, and stays so whichever one element a kernel misses or misreads"
    )
    assert rows["some"].status == "ok" and rows["some"].not_established is None, rows["some"]


@pytest.mark.parametrize("name", ["dangling_sum", "rmsnorm/variance"])
def test_a_reduction_openvino_does_not_build_is_listed_not_audited(tmp_path: Path, name: str) -> None:
    """A reduction that reaches no Result: OpenVINO's reader leaves it out, so no run computes it. It was absent from
    the audit, which called itself complete; it is a row that says why, under its own name or one it shares."""
    samples = Path(__file__).resolve().parents[2] / "ir_samples"
    dangling = f"""<layer id="900" name="{name}" type="ReduceSum" version="opset1"><data keep_dims="false"/>
        <input><port id="0" precision="FP32"><dim>1</dim><dim>-1</dim><dim>64</dim></port>
        <port id="1" precision="I64"><dim>1</dim></port></input>
        <output><port id="2" precision="FP32"><dim>1</dim><dim>-1</dim></port></output></layer>"""
    edges = '<edge from-layer="0" from-port="0" to-layer="900" to-port="0"/>'
    edges += '<edge from-layer="4" from-port="0" to-layer="900" to-port="1"/>'
    xml = (samples / "rmsnorm.xml").read_text().replace("</layers>", f"{dangling}</layers>", 1)
    (tmp_path / "m.xml").write_text(xml.replace("<edges>", f"<edges>{edges}", 1))
    (tmp_path / "m.bin").write_bytes((samples / "rmsnorm.bin").read_bytes())
    doc = _audit(tmp_path / "m.xml", precision="f32", shapes={"hidden_states": PartialShape.parse("[1,8,64]")})
    rows = {row.layer_id: row for row in doc.layers}
    assert rows["5"].status == "ok" and rows["5"].not_established is None, rows["5"]
    assert rows["900"].status == "not-audited" and rows["900"].layer_name == name, rows["900"]
    assert rows["900"].not_established is not None and "OpenVINO does not build it" in rows["900"].not_established
    assert not doc.complete and doc.coverage == {"reductions": 2, "ok": 1, "not-audited": 1}


def test_a_reduction_of_no_axis_is_judged_as_run_judges_it(tmp_path: Path) -> None:
    """Empty axes, keep_dims: the identity, which shows whether a kernel keeps each element. ``run`` and ``conform``
    establish it; the audit said its row was not established ("it reduces no axis")."""
    x = ops.parameter([2, 3, 4], np.float32, name="x")
    mean = ops.reduce_mean(x, ops.constant(np.array([], np.int64)), True, name="r")
    ov.save_model(ov.Model([mean], [x]), tmp_path / "m.xml", compress_to_fp16=False)
    [row] = _audit(tmp_path / "m.xml", precision="f32").layers
    assert row.status == "ok" and row.not_established is None, row
    report = run_layer(load_ir(tmp_path / "m.xml"), "r")
    assert report.outcome == "agree" and report.notes == [], report.notes


def test_a_complete_audit_says_every_reduction_is_within_tolerance(tmp_path: Path) -> None:
    x = ops.parameter([4, 8], np.float32, name="x")
    red = ops.reduce_max(x, ops.constant(np.array([1], np.int64)), False, name="max")
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([red], [x], "one"), path, compress_to_fp16=False)
    doc = _audit(path, precision="f32")
    assert doc.ok and doc.complete and doc.coverage == {"reductions": 1, "ok": 1}
    assert doc.to_json()["complete"] is True


def test_axes_given_out_of_range_fail_the_audit_in_openvinos_words_without_its_source_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    x, axes = ops.parameter([2, 3, 8], np.float32, name="x"), ops.parameter([1], np.int64, name="axes")
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([ops.reduce_mean(x, axes, True)], [x, axes]), path)
    np.save(tmp_path / "axes.npy", np.array([5], dtype=np.int64))
    status, out, _ = run_cli(capsys, "audit", str(path), "--input", f"axes={tmp_path / 'axes.npy'}", "--format", "json")
    error = json.loads(out)["error"]
    assert status == 1 and error.startswith("OpenVINO failed: "), error
    assert error.endswith("Axis 5 out of the tensor rank range [-3, 2]."), error
    assert "Exception from" not in error and "Caught exception" not in error and ".cpp" not in error, error


def _nested_if(path: Path) -> Path:
    """An If on the input ``cond`` whose then body holds a ReduceMean and an If of its own (a ReduceSum in its
    then body, a ReduceMin in its else body); a ReduceMax in the outer else body."""
    axes = ops.constant(np.array([1], np.int64))
    cond, x = ops.parameter([], np.bool_, name="cond"), ops.parameter([2, 8], np.float32, name="x")
    inner_cond, then_x = ops.parameter([], np.bool_), ops.parameter([2, 8], np.float32)
    inner_then_x, inner_else_x = ops.parameter([2, 8], np.float32), ops.parameter([2, 8], np.float32)
    inner_then = ops.result(ops.reduce_sum(inner_then_x, axes))
    inner_else = ops.result(ops.reduce_min(inner_else_x, axes))
    inner = ops.if_op(inner_cond)
    inner.set_then_body(ov.Model([inner_then], [inner_then_x]))
    inner.set_else_body(ov.Model([inner_else], [inner_else_x]))
    inner.set_input(then_x.output(0), inner_then_x, inner_else_x)
    then_out = ops.result(ops.add(ops.reduce_mean(then_x, axes), inner.set_output(inner_then, inner_else)))
    else_x = ops.parameter([2, 8], np.float32)
    else_out = ops.result(ops.reduce_max(else_x, axes))
    outer = ops.if_op(cond)
    outer.set_then_body(ov.Model([then_out], [then_x, inner_cond]))
    outer.set_else_body(ov.Model([else_out], [else_x]))
    outer.set_input(x.output(0), then_x, else_x)
    outer.set_input(cond.output(0), inner_cond, None)
    ov.save_model(ov.Model([ops.result(outer.set_output(then_out, else_out))], [cond, x]), path)
    return path


def test_the_reductions_of_bodies_nested_in_a_branch_that_did_not_run_say_so(tmp_path: Path) -> None:
    path = _nested_if(tmp_path / "m.xml")
    doc = _audit(path, inputs={"cond": np.array(False)})
    rows = {layer.body_path: layer for layer in doc.layers if layer.status == "not-audited"}
    assert sorted(rows) == ["2/then", "2/then/4/else", "2/then/4/then"], sorted(rows)
    for row in rows.values():  # the inner If is in the then body, which did not run: named last, as the reason
        assert row.not_established is not None and row.not_established.startswith("inside the ")
        assert (
            "the then body of If 'If_" in row.not_established and "(layer 2), which did not run" in row.not_established
        )
        said = f"which did not run: the condition was false; a run of layer `{row.body_path}/{row.layer_id}`"
        assert said in row.not_established, row.not_established


def _in_body(kind: str, body: Any, data: Any, idx: Any) -> Any:
    """``body(data, idx)`` in the then branch of an If (``kind`` "If") or the body of a Loop run twice."""
    inner = [ops.parameter(data.get_output_partial_shape(0), np.float32), ops.parameter([4, 2], np.int32)]
    out = ops.result(body(*inner))
    if kind == "If":
        chosen = ops.if_op(ops.constant(np.array(True)))
        other = [ops.parameter(data.get_output_partial_shape(0), np.float32), ops.parameter([4, 2], np.int32)]
        chosen.set_then_body(ov.Model([out], inner))
        chosen.set_else_body(ov.Model([ops.result(body(other[0], ops.constant(np.zeros((4, 2), np.int32))))], other))
        for outer, then, orelse in zip([data, idx], inner, other, strict=True):
            chosen.set_input(outer.output(0), then, orelse)
        return chosen.set_output(out, chosen.get_else_body().get_results()[0])
    loop = ops.loop(ops.constant(np.int64(2)), ops.constant(np.array(True)))
    loop.set_function(ov.Model([ops.result(ops.constant(np.array(True))), out], inner))
    loop.set_special_body_ports([-1, 0])
    for outer, param in zip([data, idx], inner, strict=True):
        loop.set_invariant_input(param, outer.output(0))
    return loop.get_iter_value(out.output(0), -1)


def _indexed(kind: str) -> ov.Model:
    """An index (or length, or count) input, ``idx``, of ``kind``'s op, the op's output summed: out of range, such
    inputs crash OpenVINO's CPU plugin (GatherND, SegmentMax: SIGSEGV) or fail the run ("points to non-existing ...
    element", "Wrong parent index"), and a count of millions takes all the memory there is."""
    from openvino import opset16

    ones = ops.constant(np.ones((8, 5, 3), np.float32))
    updates = ops.constant(np.ones((4, 5, 3), np.float32))
    zero = ops.constant(np.array(0, np.int64))
    made = {
        "GatherND": lambda i: ops.gather_nd(ones, i),
        "GatherND-batch": lambda i: ops.gather_nd(ones, i, batch_dims=1),
        "GatherND-concat": lambda i: ops.gather_nd(ones, ops.concat([ops.constant(np.zeros((4, 1), np.int32)), i], 1)),
        "GatherND-if": lambda i: _in_body("If", ops.gather_nd, ones, i),
        "GatherND-loop": lambda i: _in_body("Loop", ops.gather_nd, ones, i),
        "GatherElements": lambda i: ops.gather_elements(ones, i, 0),
        "ScatterNDUpdate": lambda i: ops.scatter_nd_update(ones, i, updates),
        "ScatterUpdate": lambda i: ops.scatter_update(ones, i, updates, zero),
        "ScatterElementsUpdate": lambda i: ops.scatter_elements_update(ones, i, updates, zero),
        "ReverseSequence": lambda i: ops.reverse_sequence(ones, i, 0, 1),
        "SegmentMax": lambda i: opset16.segment_max(ones, i, ops.constant(np.array(3, np.int32)), "ZERO"),
        "ROIAlign": lambda i: ops.roi_align(ops.constant(np.ones((2, 3, 8, 8), np.float32)), ops.constant(
            np.array([[0, 0, 4, 4]] * 4, np.float32)), i, 2, 2, 1, 1.0, "avg"),
        "CTCGreedyDecoderSeqLen": lambda i: ops.convert(ops.ctc_greedy_decoder_seq_len(ops.constant(
            np.ones((2, 6, 5), np.float32)), i).output(0), "f32"),
        "RandomUniform": lambda i: ops.random_uniform(i, ops.constant(np.float32(0)), ops.constant(np.float32(1)),
                                                      "f32"),
    }  # fmt: skip
    shapes = {"GatherND": [4, 2], "GatherND-batch": [8, 4, 1], "GatherND-concat": [4, 1], "GatherND-if": [4, 2],
              "GatherND-loop": [4, 2], "GatherElements": [4, 5, 3], "ScatterNDUpdate": [4, 1], "ScatterUpdate": [4],
              "ScatterElementsUpdate": [4, 5, 3], "ReverseSequence": [8], "SegmentMax": [8], "ROIAlign": [4],
              "CTCGreedyDecoderSeqLen": [2], "RandomUniform": [2]}  # fmt: skip
    idx = ops.parameter(shapes[kind], np.int32, name="idx")
    out = ops.reduce_sum(made[kind](idx), ops.constant(np.array([0], np.int64)), False, name="red")
    return ov.Model([out], [idx], kind)


@pytest.mark.parametrize(("kind", "made"), [
    ("GatherND", "ids in [0, 5) (indices of GatherND"),  # the smaller of the two axes it indexes, 8 and 5
    ("GatherND-batch", "ids in [0, 5) (indices of GatherND"),  # after its batch axis
    ("GatherElements", "ids in [0, 8) (indices of GatherElements"),
    ("ScatterNDUpdate", "ids in [0, 8) (indices of ScatterNDUpdate"),
    ("ScatterUpdate", "ids in [0, 8) (indices of ScatterUpdate"),
    ("ScatterElementsUpdate", "ids in [0, 8) (indices of ScatterElementsUpdate"),
    ("ReverseSequence", "ids in [0, 6) (lengths of ReverseSequence"),  # a length may be the whole axis
    ("GatherND-concat", "ids in [0, 5) (indices of GatherND"),  # through a Concat's second input
    ("GatherND-if", "ids in [0, 5) (indices of GatherND"),  # inside the bodies it feeds
    ("GatherND-loop", "ids in [0, 5) (indices of GatherND"),
    ("SegmentMax", "ids in [0, 1) (input 1 of SegmentMax"),  # zeros: sorted, and below any number of segments
    ("ROIAlign", "ids in [0, 1) (input 2 of ROIAlign"),
    ("CTCGreedyDecoderSeqLen", "ids in [0, 7) (lengths of CTCGreedyDecoderSeqLen"),
    ("RandomUniform", "integers in [1, 4] (input 0 of RandomUniform"),  # a shape
])  # fmt: skip
def test_index_inputs_are_made_in_the_range_of_what_they_index(tmp_path: Path, kind: str, made: str) -> None:
    """Indices ovreduce makes must not crash OpenVINO, nor fail the audit for inputs ovreduce made up; the audit
    runs in a process of its own, so that a crash fails this test alone."""
    import subprocess
    import sys

    path = tmp_path / "m.xml"
    ov.save_model(_indexed(kind), path, compress_to_fp16=False)
    done = subprocess.run([sys.executable, "-m", "ovreduce.cli", "audit", str(path), "--format", "json"],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    (origin,) = [i["origin"] for i in json.loads(done.stdout)["inputs"] if i["name"] == "idx"]
    assert made in origin, origin


def test_a_failure_on_integers_ovreduce_made_says_so(tmp_path: Path) -> None:
    """A Reshape's target shape from an input: the small counts ovreduce makes for it cannot fit the data, and
    OpenVINO fails; the failure names the input ovreduce made, so the model is not blamed for it."""
    x = ops.parameter([2, 6], np.float32, name="x")
    target = ops.parameter([2], np.int64, name="target")
    mean = ops.reduce_mean(ops.reshape(x, target, special_zero=False), ops.constant(np.array([1], np.int64)), False)
    path = tmp_path / "m.xml"
    ov.save_model(ov.Model([mean], [x, target]), path)
    doc = _audit(path)
    assert doc.error is not None and doc.error.startswith("OpenVINO failed: "), doc.error
    assert doc.error.endswith("it ran on integer inputs ovreduce made ('target'): where they must fit what the model "
                              "does with them (indices, counts, shapes), give them"), doc.error  # fmt: skip
    given = _audit(path, inputs={"target": np.array([3, 4], np.int64)})
    assert given.error is None and given.ok, given.error


def test_a_decoder_s_cross_attention_past_is_not_its_own() -> None:
    """A seq2seq decoder exported with its past as inputs has the encoder's keys and values among them
    (``past_key_values.N.encoder.key``, as long as the encoder's sequence): its mask covered them too, 19 long beside a
    past of 3 and 8 new tokens, and the right mask given was said to describe no one text."""
    from ovreduce.backends.openvino import model_inputs

    ids, mask = _parameter([-1, -1], np.int64, "input_ids"), _parameter([-1, -1], np.int64, "decoder_attention_mask")
    names = [f"past_key_values.0.{side}.{kind}" for side in ("decoder", "encoder") for kind in ("key", "value")]
    past = [_parameter([-1, 2, -1, 4], np.float32, name) for name in names]
    axis = ops.constant(np.array([2], np.int64))
    looked_up = ops.convert(ids, "f32")
    outputs = [ops.reduce_mean(p, axis, False) for p in past] + [ops.reduce_sum(ops.convert(mask, "f32"), [1], False),
                                                                  ops.reduce_sum(looked_up, [1], False)]  # fmt: skip
    model = ov.Model(outputs, [ids, mask, *past])
    rng = np.random.default_rng(1)
    given = {n: rng.standard_normal((1, 2, 11 if ".encoder." in n else 3, 4)).astype(np.float32) for n in names}
    _, described, _ = model_inputs(model, given, 0)
    assert {i.name: tuple(i.shape) for i in described}["decoder_attention_mask"] == (1, 11)
    _, _, notes = model_inputs(model, {**given, "decoder_attention_mask": np.ones((1, 11), np.int64)}, 0)
    assert not any("describe no one text" in note for note in notes), notes


def test_cache_positions_follow_the_token_ids_and_the_past_given() -> None:
    """A decoder exported with its past as inputs and ``cache_position`` (optimum's Whisper decoder): generation feeds
    the positions of the new tokens in the cache, ``arange(past, past + tokens)``. It was made ``[0]`` beside 8 ids,
    and ``[0]`` still beside a past of 3 given, though ``position_ids`` beside it followed the past."""
    from ovreduce.backends.openvino import model_inputs

    def build() -> Any:  # (made inputs reshape the model)
        ids, cache = _parameter([-1, -1], np.int64, "input_ids"), _parameter([-1], np.int64, "cache_position")
        past = _parameter([-1, 2, -1, 4], np.float32, "past_key_values.0.decoder.key")
        outputs = [ops.reduce_max(cache, ops.constant(np.array([0], np.int64)), False),
                   ops.reduce_sum(ops.convert(ids, "f32"), [1], False),
                   ops.reduce_mean(past, ops.constant(np.array([2], np.int64)), False)]  # fmt: skip
        return ov.Model(outputs, [ids, cache, past])

    names = ["input_ids", "cache_position", "past_key_values.0.decoder.key"]
    arrays, described, _ = model_inputs(build(), {}, 0)
    fed = {names[i]: array for i, array in arrays.items()}
    assert fed["cache_position"].tolist() == list(range(fed["input_ids"].shape[1])), fed
    given = {"input_ids": np.array([[3, 7]]), "past_key_values.0.decoder.key": np.ones((1, 2, 3, 4), np.float32)}
    arrays, described, _ = model_inputs(build(), given, 0)
    fed = {names[i]: array for i, array in arrays.items()}
    assert fed["cache_position"].tolist() == [3, 4], fed
    origin = {i.name: i.origin for i in described}["cache_position"]
    assert origin == "positions 3.. after the 3 past positions given", origin


def test_a_cross_attention_past_beside_a_later_step_is_the_encoder_s_length() -> None:
    """A seq2seq decoder given only its own past (a later step): the cross-attention past, the encoder's keys and
    values, was made empty and called the first step of generation. It is as long as the encoder's sequence: its
    mask's where given, else a prompt's."""
    from ovreduce.backends.openvino import model_inputs

    def build() -> Any:  # (made inputs reshape the model)
        ids, mask = (
            _parameter([-1, -1], np.int64, "input_ids"),
            _parameter([-1, -1], np.int64, "encoder_attention_mask"),
        )
        past = [
            _parameter([-1, 2, -1, 4], np.float32, f"past_key_values.0.{side}.key") for side in ("decoder", "encoder")
        ]
        outputs = [ops.reduce_mean(p, ops.constant(np.array([2], np.int64)), False) for p in past]
        outputs += [
            ops.reduce_sum(ops.convert(ids, "f32"), [1], False),
            ops.reduce_sum(ops.convert(mask, "f32"), [1], False),
        ]
        return ov.Model(outputs, [ids, mask, *past])

    own = {"past_key_values.0.decoder.key": np.ones((1, 2, 3, 4), np.float32)}
    _, described, notes = model_inputs(build(), own, 0)
    shapes = {i.name: tuple(i.shape) for i in described}
    assert shapes["past_key_values.0.encoder.key"] == (1, 2, 8, 4), shapes
    assert not any("first step of generation" in note for note in notes), notes
    assert any("(past_key_values.0.encoder.key...) are made of seeded values, 8 positions long, an encoder's" in note
               for note in notes), notes  # fmt: skip
    _, described, _ = model_inputs(build(), {**own, "encoder_attention_mask": np.ones((1, 11), np.int64)}, 0)
    assert {i.name: tuple(i.shape) for i in described}["past_key_values.0.encoder.key"] == (1, 2, 11, 4)


def test_a_decoder_with_past_given_none_gets_the_encoder_s_keys_and_values() -> None:
    """A seq2seq decoder with past (optimum's ``openvino_decoder_with_past_model.xml``) given nothing: its
    cross-attention past (the encoder's keys and values) was made empty beside an encoder mask of 1, so
    cross-attention attended over nothing and the encoder's hidden states went unread, and the note called it the first
    step of generation, which runs the decoder without past. The encoder's keys and values are as long as its sequence
    (a prompt's, or the mask's or hidden states' given); the self-attention past is what is left empty, and said so."""
    from ovreduce.backends.openvino import model_inputs

    def build() -> Any:  # (made inputs reshape the model)
        ids, mask = (
            _parameter([-1, -1], np.int64, "input_ids"),
            _parameter([-1, -1], np.int64, "encoder_attention_mask"),
        )
        hidden = _parameter([-1, -1, 4], np.float32, "encoder_hidden_states")
        past = [
            _parameter([-1, 2, -1, 4], np.float32, f"past_key_values.0.{side}.key") for side in ("decoder", "encoder")
        ]
        keys = ops.multiply(past[1], ops.unsqueeze(ops.convert(mask, "f32"), ops.constant(np.array([1, 3], np.int64))))
        outputs = [ops.reduce_mean(p, ops.constant(np.array([2], np.int64)), False) for p in (past[0], keys)]
        outputs += [ops.reduce_sum(ops.convert(ids, "f32"), [1], False), ops.reduce_sum(hidden, [1], False)]
        return ov.Model(outputs, [ids, mask, hidden, *past])

    _, described, notes = model_inputs(build(), {}, 0)
    shapes = {i.name: tuple(i.shape) for i in described}
    assert shapes["past_key_values.0.decoder.key"] == (1, 2, 0, 4), shapes
    assert shapes["past_key_values.0.encoder.key"] == (1, 2, 8, 4), shapes
    assert shapes["encoder_attention_mask"] == (1, 8) and shapes["encoder_hidden_states"] == (1, 8, 4), shapes
    assert not any("first step of generation" in note for note in notes), notes
    assert any(note.startswith("the 1 self-attention past key and value inputs (past_key_values.0.decoder.key...) are "
                               "empty") for note in notes), notes  # fmt: skip
    assert any(note.startswith("the 1 cross-attention past key and value inputs not given") for note in notes), notes
    _, described, _ = model_inputs(build(), {"encoder_hidden_states": np.ones((1, 5, 4), np.float32)}, 0)
    shapes = {i.name: tuple(i.shape) for i in described}
    assert shapes["past_key_values.0.encoder.key"] == (1, 2, 5, 4) and shapes["encoder_attention_mask"] == (1, 5)


def test_a_past_shaped_is_followed_as_a_past_given() -> None:
    """A past asked for by its shape (``--shape``), not given: the other layers' past was made empty, the mask did
    not cover it and the positions began at 0, the first step said, beside a past of 5."""
    from ovreduce.backends.openvino import model_inputs
    from ovreduce.shapes import PartialShape

    ids, mask, positions, past, keys = _stateless_llm()
    other = ops.parameter([-1, 2, -1, 4], np.float32, name="other")
    other.output(0).set_names({"past_key_values.1.key"})
    seen = ops.reduce_mean(other, ops.constant(np.array([2], np.int64)), False)
    model = ov.Model([keys, seen], [ids, mask, positions, past, other])
    shaped = {"past_key_values.0.key": PartialShape.parse("[1,2,5,4]")}
    arrays, described, notes = model_inputs(model, {}, 0, shapes=shaped)
    shapes = {i.name: tuple(i.shape) for i in described}
    assert shapes["past_key_values.1.key"] == (1, 2, 5, 4) and shapes["attention_mask"] == (1, 13), shapes
    fed = {i.name: arrays[k] for k, i in enumerate(described)}
    assert fed["position_ids"].tolist() == [list(range(5, 13))], fed["position_ids"]
    assert not any("first step of generation" in note for note in notes), notes


def test_positions_per_rotary_section_follow_the_embeddings() -> None:
    """A Qwen2-VL language model (optimum-intel's export) takes ``inputs_embeds`` and ``position_ids`` per rotary
    section, [3, batch, tokens]: they were made [3, 1, 1] beside 8 embeddings, every token at position 0, and given as
    generation feeds them they were said to describe no one text."""
    from ovreduce.backends.openvino import model_inputs

    def build() -> Any:
        nodes = [ops.parameter(shape, etype, name=name) for shape, etype, name in (
            ([-1, -1, 16], np.float32, "inputs_embeds"), ([-1, -1], np.int64, "attention_mask"),
            ([3, -1, -1], np.int64, "position_ids"))]  # fmt: skip
        for node in nodes:
            node.output(0).set_names({node.get_friendly_name()})
        embeds, mask, positions = nodes
        angle = ops.unsqueeze(ops.convert(positions, "f32"), ops.constant(np.int64(-1)))  # [3, batch, tokens, 1]
        masked = ops.unsqueeze(ops.convert(mask, "f32"), ops.constant(np.int64(-1)))
        turned = ops.multiply(ops.multiply(ops.cos(angle), embeds), masked)
        return ov.Model([ops.reduce_mean(turned, ops.constant(np.array([-1], np.int64)), False)], nodes)

    model = build()
    arrays, _, notes = model_inputs(model, {}, 0)
    fed = {port.get_any_name(): arrays[i] for i, port in enumerate(model.inputs)}
    assert fed["position_ids"].tolist() == [[list(range(8))]] * 3 and fed["attention_mask"].shape == (1, 8), notes
    given = np.broadcast_to(np.arange(8), (3, 1, 8)).astype(np.int64)
    _, _, notes = model_inputs(build(), {"position_ids": given}, 0)
    assert not any("describe no one text" in note for note in notes), notes


@pytest.mark.parametrize(
    ("shaped", "expected"),
    [
        ({"input_ids": "[1,1..8]"}, (1, 8)),
        ({"input_ids": "[1,4..8]"}, (1, 8)),
        ({"input_ids": "[1,10..12]"}, (1, 10)),
        ({"input_ids": "[2,?]"}, (2, 8)),
        ({"input_ids": "[1..2,3..5]"}, (1, 5)),
        ({"input_ids": "[1,3]", "attention_mask": "[1,?]"}, (1, 3)),
        ({"attention_mask": "[1,?]"}, (1, 8)),
    ],
)
def test_the_inputs_along_the_token_ids_follow_their_shape_however_it_was_given(
    shaped: dict[str, str], expected: tuple[int, int]
) -> None:
    """Token ids shaped with an interval (``--shape input_ids=[1,1..8]``) were settled by OpenVINO's shape inference
    on its own while the mask and positions took a default of their own ([1, 4] ids beside a [1, 1] mask): the ids
    now get one static shape, as a prompt ovreduce makes (8 tokens, within the interval), and the inputs that run
    along them follow it; an input along them shaped with a dim left open follows them too."""
    from ovreduce.backends.openvino import model_inputs

    model = ov.Core().read_model(str(EXPORTS / "llama_int4" / "openvino_model.xml"))
    shapes = {name: PartialShape.parse(shape) for name, shape in shaped.items()}
    arrays, described, notes = model_inputs(model, {}, 0, shapes=shapes)
    fed = {i.name: arrays[k] for k, i in enumerate(described)}
    assert fed["input_ids"].shape == expected, notes
    assert fed["attention_mask"].shape == expected and (fed["attention_mask"] == 1).all(), notes
    assert fed["position_ids"].tolist() == [list(range(expected[1]))] * expected[0], notes
    assert fed["beam_idx"].tolist() == list(range(expected[0])), notes
    assert not any("describe no one text" in note for note in notes), notes
    for name, shape in shapes.items():  # what was left open is said, as ovreduce chose it
        open_dims = [i for i, d in enumerate(shape) if not d.is_static]
        assert all(f"input {name!r}: dynamic dimension {i} ({shape.dims[i]}) set to {expected[i]}" in notes
                   for i in open_dims), notes  # fmt: skip
        assert next(i for i in described if i.name == name).defaulted_dims == tuple(open_dims)


def test_an_input_along_the_token_ids_shaped_to_another_length_is_said() -> None:
    from ovreduce.backends.openvino import model_inputs

    model = ov.Core().read_model(str(EXPORTS / "llama_int4" / "openvino_model.xml"))
    shapes = {"input_ids": PartialShape.parse("[1,3]"), "attention_mask": PartialShape.parse("[1,5]")}
    _, _, notes = model_inputs(model, {}, 0, shapes=shapes)
    assert any("'attention_mask' [1, 5] was shaped to another shape than the token ids 'input_ids' [1, 3]" in note
               for note in notes), notes  # fmt: skip


def _loop_in_if(path: Path) -> Path:
    """An If ('branch') on ``cond`` whose then body holds a ReduceMean and a Loop ('steps') with a ReduceSum in its
    body; a ReduceMax in the else body."""
    axes = ops.constant(np.array([1], np.int64))
    cond, x = ops.parameter([], np.bool_, name="cond"), ops.parameter([2, 8], np.float32, name="x")
    then_x, inner = ops.parameter([2, 8], np.float32), ops.parameter([2, 8], np.float32)
    summed = ops.result(ops.reduce_sum(inner, axes, name="loop_sum"))
    loop = ops.loop(ops.constant(np.int64(2)), ops.constant(np.array(True)))
    loop.set_friendly_name("steps")
    loop.set_function(ov.Model([ops.result(ops.constant(np.array(True))), summed], [inner]))
    loop.set_special_body_ports([-1, 0])
    loop.set_invariant_input(inner, then_x.output(0))
    then_out = ops.result(ops.add(ops.reduce_mean(then_x, axes, name="then_mean"),
                                  loop.get_iter_value(summed.output(0), -1)))  # fmt: skip
    else_x = ops.parameter([2, 8], np.float32)
    else_out = ops.result(ops.reduce_max(else_x, axes, name="else_max"))
    branch = ops.if_op(cond.output(0))
    branch.set_friendly_name("branch")
    branch.set_then_body(ov.Model([then_out], [then_x]))
    branch.set_else_body(ov.Model([else_out], [else_x]))
    branch.set_input(x.output(0), then_x, else_x)
    ov.save_model(ov.Model([ops.result(branch.set_output(then_out, else_out))], [cond, x]), path)
    return path


def test_the_containers_of_body_rows_are_named_as_top_level_ones_are(tmp_path: Path) -> None:
    """A body's rows named it by its ids path ("the 2/then body"), where a top-level container is named by its type,
    name and layer; a nested body's container is now named so too, with the ids path of its layer, within its own
    container's body."""
    path = _loop_in_if(tmp_path / "m.xml")
    doc = _audit(path, inputs={"cond": np.array(True)}, target="f16")
    rows = {layer.layer_name: layer for layer in doc.layers}
    outer = "the then body of If 'branch' (layer 2)"
    assert f"audited from {outer}, run alone on the values the If gave it in the whole run" in rows["then_mean"].notes
    assert rows["then_mean"].target is not None
    assert rows["then_mean"].target.message.endswith(f"; judged from {outer}, run alone")  # the body that ran
    assert rows["loop_sum"].target is not None
    assert rows["loop_sum"].target.message.startswith("not examined: inside the body of Loop 'steps'")
    assert rows["loop_sum"].not_established is not None
    assert rows["loop_sum"].not_established.startswith(
        f"inside the body of Loop 'steps' (layer 2/then/5), in {outer}: "
    )
    for row in doc.layers:  # no body named by its ids path alone
        said = " ".join([row.not_established or "", *row.notes, row.target.message if row.target else ""])
        assert "the 2/then body" not in said and "the 2/then/5/body body" not in said, said
    skipped = _audit(path, inputs={"cond": np.array(False)})
    inner = next(layer for layer in skipped.layers if layer.layer_name == "loop_sum")
    assert inner.not_established == (f"inside the body of Loop 'steps' (layer 2/then/5), in {outer}, which did not "
                                     f"run: the condition was false; a run of layer `2/then/5/body/2` "
                                     f"runs it on its own")  # fmt: skip


def test_a_past_given_counts_toward_the_positions_the_model_takes(tmp_path: Path) -> None:
    """The positions the model takes bound the sequence fed whatever gives it: a past of 30 given before 8 token ids
    reaches position 37, past a table of 32, and is refused as a prompt that long is; a past of 20 fits."""
    ids, mask, positions, past, keys = _stateless_llm()
    seen = [
        ops.reduce_sum(ops.convert(p, "f32"), ops.constant(np.array([1], np.int64)), False) for p in (mask, positions)
    ]
    ov.save_model(ov.Model([keys, *seen], [ids, mask, positions, past]), tmp_path / "m.xml", compress_to_fp16=False)
    table = (32, "config.json: n_positions")
    given = {"past_key_values.0.key": np.ones((1, 2, 30, 4), np.float32)}
    refused = r"positions 0\.\.37 \(8 token\(s\) of 'input_ids' after a past of 30\), more than the 32 positions"
    with pytest.raises(InputError, match=refused):
        _audit(tmp_path / "m.xml", precision="f32", inputs=given, positions=table)
    given = {"past_key_values.0.key": np.ones((1, 2, 20, 4), np.float32)}
    assert _audit(tmp_path / "m.xml", precision="f32", inputs=given, positions=table).error is None


def test_a_decoder_without_past_gets_an_encoder_sequence_as_long_as_a_prompt() -> None:
    """A seq2seq decoder without past (optimum's ``openvino_decoder_model.xml``, the first step of generation, and
    every step of a stateful export) got an encoder of one position: cross-attention's softmax over one key is 1
    whatever it reads, and what reduces the encoder mask saw ones alone. Its encoder's sequence is a prompt's (8), as
    the decoder with past gets, and the note says so."""
    doc = _audit(EXPORTS / "t5_seq2seq" / "openvino_decoder_model.xml", precision="f32")
    assert doc.error is None, doc.error
    shapes = {i.name: tuple(i.shape) for i in doc.inputs}
    assert shapes["encoder_attention_mask"] == (1, 8) and shapes["encoder_hidden_states"] == (1, 8, 32), shapes
    assert any(note.startswith("the encoder's inputs not given (encoder_attention_mask, encoder_hidden_states) are "
                               "made 8 positions long, an encoder's sequence as long as a prompt made")
               for note in doc.notes), doc.notes  # fmt: skip


def _decoder(width: int) -> Any:
    """A decoder's inputs as optimum names them, its encoder hidden states of a dynamic width that a MatMul pins to
    ``width`` (T5's and Pegasus' decoders without past: ``encoder_hidden_states [?,?,?]``)."""
    ids, mask = _parameter([-1, -1], np.int64, "input_ids"), _parameter([-1, -1], np.int64, "encoder_attention_mask")
    hidden = _parameter([-1, -1, -1], np.float32, "encoder_hidden_states")
    keys = ops.matmul(hidden, ops.constant(np.ones((width, 2), np.float32)), False, False)
    outputs = [ops.reduce_sum(keys, ops.constant(np.array([1], np.int64)), False),
               ops.reduce_sum(ops.convert(mask, "f32"), [1], False),
               ops.reduce_sum(ops.convert(ids, "f32"), [1], False)]  # fmt: skip
    return ov.Model(outputs, [ids, mask, hidden])


def test_a_decoders_encoder_length_does_not_hang_on_its_hidden_width() -> None:
    """A decoder whose encoder hidden states have a dynamic width got an encoder as long as the fill that fit the
    width (32), where one of a static width got 1: the encoder's length is a prompt's whatever the width, the width
    the fill that fits it; an encoder's length the export's config gives (Whisper's ``max_source_positions``) is
    taken over a prompt's, and one given over both."""
    from ovreduce.backends.openvino import model_inputs

    _, described, notes = model_inputs(_decoder(32), {}, 0)
    shapes = {i.name: tuple(i.shape) for i in described}
    assert shapes["encoder_hidden_states"] == (1, 8, 32) and shapes["encoder_attention_mask"] == (1, 8), shapes
    assert any("input 'encoder_hidden_states': dynamic dimension 2 (?) set to 32" in note for note in notes), notes
    config = (12, "config.json: max_source_positions")
    _, described, notes = model_inputs(_decoder(32), {}, 0, encoder=config)
    shapes = {i.name: tuple(i.shape) for i in described}
    assert shapes["encoder_hidden_states"] == (1, 12, 32) and shapes["encoder_attention_mask"] == (1, 12), shapes
    assert any("are made 12 positions long, as config.json: max_source_positions says the encoder output" in note
               for note in notes), notes  # fmt: skip
    mask = {"encoder_attention_mask": np.ones((1, 5), np.int64)}
    _, described, notes = model_inputs(_decoder(32), mask, 0, encoder=config)
    assert {i.name: tuple(i.shape) for i in described}["encoder_hidden_states"] == (1, 5, 32)
    assert any("5 positions long, the encoder's sequence as 'encoder_attention_mask' gives it" in note
               for note in notes), notes  # fmt: skip


def test_a_whisper_exports_decoder_gets_the_encoders_frames(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Whisper's encoder always gives ``max_source_positions`` frames (config.json): its decoder audited from the
    export reads that many, not a prompt's length."""
    import shutil

    folder = tmp_path / "export"
    shutil.copytree(EXPORTS / "t5_seq2seq", folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "model_type": "whisper", "max_source_positions": 12}))
    status, out, err = run_cli(capsys, "audit", str(folder / "openvino_decoder_model.xml"), "--format", "json")
    assert status == 0, err
    doc = json.loads(out)
    shapes = {i["name"]: i["shape"] for i in doc["inputs"]}
    assert shapes["encoder_hidden_states"] == [1, 12, 32] and shapes["encoder_attention_mask"] == [1, 12], shapes
    assert any("12 positions long, as config.json: max_source_positions says the encoder output is" in note
               for note in doc["notes"]), doc["notes"]  # fmt: skip


def _masked_scores(path: Path, rows: int = 8) -> Path:
    """Scores masked as masked_fill(mask, -inf) leaves them (one per row, as a router's sparse mixer masks its first
    pick), then reduced as a max (the second pick), a sum and a min; the same scores masked with +inf, a min."""
    x = ops.parameter([rows, 4], np.float32, name="scores")
    x.output(0).set_names({"scores"})
    mask = np.zeros((rows, 4), bool)
    mask[np.arange(rows), np.arange(rows) % 4] = True
    low = ops.select(ops.constant(mask), ops.constant(np.float32(-np.inf)), x)
    high = ops.select(ops.constant(mask), ops.constant(np.float32(np.inf)), x)
    axis = ops.constant(np.array([-1], np.int64))
    outs = [ops.reduce_max(low, axis, True, name="second_pick"), ops.reduce_min(high, axis, True, name="lowest"),
            ops.reduce_sum(low, axis, True, name="masked_sum"),
            ops.reduce_min(low, axis, True, name="min_of_masked")]  # fmt: skip
    ov.save_model(ov.Model(outs, [x], "masked"), path, compress_to_fp16=False)
    return path


def test_a_max_over_scores_masked_with_minus_inf_is_established_on_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """-inf at a masked score decides no max of a slice holding a finite score (nor +inf a min): each output is a
    finite element, which a kernel that drops or misreads one shows, so the row is established against OpenVINO and
    says the masked elements were there; a sum or a min over the same -inf is decided by them, and stays not
    established."""
    path = _masked_scores(tmp_path / "m.xml")
    rows = {layer.layer_name: layer for layer in _audit(path, precision="f32").layers}
    masked = (
        "8 of its 32 input elements are {} (masked): each slice it reduces holds a finite element besides, so they "
        "decided no output, and it is judged on the finite elements"
    )
    assert rows["second_pick"].status == "ok", rows["second_pick"]
    assert masked.format("-inf") in rows["second_pick"].notes
    assert rows["lowest"].status == "ok" and masked.format("inf") in rows["lowest"].notes, rows["lowest"]
    for name in ("masked_sum", "min_of_masked"):
        row = rows[name]
        assert row.status == "not-established" and row.not_established == "8 of its 32 input elements are not finite"
        assert not any("masked" in note for note in row.notes), row
    _, out, _ = run_cli(capsys, "audit", str(path), "--precision", "f32", "--target", "f16")
    assert "second_pick: not established" not in out and masked.format("-inf") in out, out


def test_a_max_over_masked_slices_of_one_repeated_value_is_not_established(tmp_path: Path) -> None:
    """Masked elements aside, each slice holding one repeated value: its max is that value whatever a kernel misses."""
    path = _masked_scores(tmp_path / "m.xml", rows=2)
    doc = _audit(path, precision="f32", inputs={"scores": np.array([[5, 5, 5, 5], [7, 7, 7, 7]], np.float32)})
    row = next(layer for layer in doc.layers if layer.layer_name == "second_pick")
    assert row.status == "not-established", row
    assert row.not_established == "each slice it reduces holds one repeated value (axes [1] of input shape [2, 4])"


def _mean_pooling(path: Path) -> Path:
    """A sentence-transformers mean pooling as optimum-intel exports it: ``sum(embeddings * mask) / clamp(sum(mask))``
    over the tokens, the mask unsqueezed and converted on its way into both sums."""
    rng = np.random.default_rng(0)
    ids = ops.parameter([-1, -1], np.int64, name="input_ids")
    ids.output(0).set_names({"input_ids"})
    mask = ops.parameter([-1, -1], np.int64, name="attention_mask")
    mask.output(0).set_names({"attention_mask"})
    table = ops.constant(rng.standard_normal((100, 32)).astype(np.float32))
    embeddings = ops.gather(table, ids, ops.constant(np.int64(0)))
    weights = ops.convert(ops.unsqueeze(mask, ops.constant(np.int64(-1))), "f32")
    tokens = ops.constant(np.array([1], np.int64))
    total = ops.reduce_sum(ops.multiply(embeddings, weights), tokens, False, name="pool/aten::sum/ReduceSum")
    count = ops.reduce_sum(weights, tokens, False, name="pool/aten::sum/ReduceSum_1")
    pooled = ops.divide(total, ops.clamp(count, 1e-9, 3.0e38))
    ov.save_model(ov.Model([pooled], [ids, mask], "st"), path, compress_to_fp16=False)
    return path


@pytest.mark.parametrize("batch", [1, 3])
def test_a_mask_a_mean_pooling_reduces_is_padded_so_that_both_sums_are_established(tmp_path: Path, batch: int) -> None:
    """The mask was ones at any batch: the pooling's token count was 'every one of its input elements is 1.0', and the
    masked sum never saw a padded position. Made with right padding (row k k+1 tokens short, never all of it), both
    sums are established against OpenVINO, and the origin says how it was made."""
    path = _mean_pooling(tmp_path / "m.xml")
    doc = _audit(path, precision="f32", shapes={"input_ids": PartialShape.parse(f"[{batch},8]")})
    rows = {row.layer_name: row for row in doc.layers}
    for name in ("pool/aten::sum/ReduceSum", "pool/aten::sum/ReduceSum_1"):
        assert rows[name].status == "ok" and rows[name].not_established is None, rows[name]
    assert _origin(doc, "attention_mask") == (
        "ones with right padding as a tokenizer pads a batch, row k ending k+1 tokens early but never padding alone "
        "(an attention mask, by its name, that ReduceSum 'pool/aten::sum/ReduceSum' reduces: a pooling)"
    )
    from ovreduce.backends.openvino import model_inputs, read_model

    probe = read_model(path)
    arrays, _, _ = model_inputs(probe, {}, 0, shapes={"input_ids": PartialShape.parse(f"[{batch},8]")})
    made = arrays[[port.get_any_name() for port in probe.inputs].index("attention_mask")]
    assert made.tolist() == [[1] * (7 - k) + [0] * (k + 1) for k in range(batch)]


def test_a_pooled_mask_of_one_token_is_not_padded_and_a_decoders_mask_stays_ones(tmp_path: Path) -> None:
    """One token: padding it would leave a row of padding alone, so the mask stays ones. A mask that feeds the attention
    alone (an LLM's, BERT's without pooling) stays ones too."""
    from ovreduce.backends.openvino import model_inputs, read_model

    probe = read_model(_mean_pooling(tmp_path / "m.xml"))
    arrays, _, _ = model_inputs(probe, {}, 0, shapes={"input_ids": PartialShape.parse("[2,1]")})
    assert arrays[1].tolist() == [[1], [1]]
    for export in ("llama_int4/openvino_model.xml", "bert_encoder/openvino_model.xml"):
        doc = _audit(EXPORTS / export, precision="f32")
        assert _origin(doc, "attention_mask") == "ones (an attention mask, by its name)", export


def _flip_or_fill_pooling(path: Path, pooling: str) -> Path:
    """sentence-transformers' last-token and max poolings as optimum-intel exports them. Last token:
    ``attention_mask.flip(1).max(1)`` (Convert, Slice of step -1, ReduceMax and a TopK for the index), the last real
    token's embedding gathered. Max: ``embeddings.masked_fill(mask == 0, -1e9).max(1)`` (Unsqueeze, Broadcast,
    Convert, Equal, Select, ReduceMax)."""
    rng = np.random.default_rng(0)
    ids = ops.parameter([-1, -1], np.int64, name="input_ids")
    ids.output(0).set_names({"input_ids"})
    mask = ops.parameter([-1, -1], np.int64, name="attention_mask")
    mask.output(0).set_names({"attention_mask"})
    embeddings = ops.gather(ops.constant(rng.standard_normal((100, 16)).astype(np.float32)), ids,
                            ops.constant(np.int64(0)))  # fmt: skip

    def i64(*values: int) -> Any:
        return ops.constant(np.array(values, np.int64))

    if pooling == "max":
        wide = ops.broadcast(ops.unsqueeze(mask, ops.constant(np.int64(-1))), ops.shape_of(embeddings))
        padding = ops.equal(ops.convert(wide, "f32"), ops.constant(np.float32(0)))
        filled = ops.select(padding, ops.constant(np.float32(-1e9)), embeddings)
        pooled = ops.reduce_max(filled, i64(1), False, name="pool/aten::max/ReduceMax")
    else:
        flipped = ops.slice(ops.convert(mask, "i32"), i64(-1), i64(-(2**63)), i64(-1), i64(1), name="pool/flip")
        found = ops.reduce_max(flipped, i64(1), False, name="pool/aten::max/ReduceMax")
        first = ops.squeeze(ops.topk(flipped, ops.constant(np.int64(1)), 1, "max", "none", "i64").output(1), i64(1))
        length = ops.gather(ops.shape_of(ids), ops.constant(np.int64(1)), ops.constant(np.int64(0)))
        first = ops.select(ops.equal(found, ops.constant(np.int32(0))), ops.subtract(length, i64(1)), first)
        last = ops.subtract(ops.subtract(length, first), i64(1))
        batch = ops.gather(ops.shape_of(embeddings), i64(0), ops.constant(np.int64(0)))
        where = ops.broadcast(ops.unsqueeze(last, i64(1, 2)), ops.concat([batch, i64(1, 16)], 0))
        pooled = ops.squeeze(ops.gather_elements(embeddings, where, 1), i64(1))
    norm = ops.reduce_l2(pooled, i64(1), True, name="normalize/ReduceL2")
    ov.save_model(ov.Model([ops.divide(pooled, norm)], [ids, mask], "st"), path, compress_to_fp16=False)
    return path


@pytest.mark.parametrize("pooling", ["lasttoken", "max"])
@pytest.mark.parametrize("batch", [1, 3])
def test_a_mask_a_last_token_or_max_pooling_reduces_is_padded(tmp_path: Path, pooling: str, batch: int) -> None:
    """The mask of a last-token pooling (its flip a Slice) or of a max pooling (its masked fill an Equal and a Select)
    was ones at any batch: the last token's ReduceMax was 'every one of its input elements is 1', the choice of the
    last token and the masked fill never saw padding. It is padded as a mean pooling's is."""
    path = _flip_or_fill_pooling(tmp_path / "m.xml", pooling)
    doc = _audit(path, precision="f32", shapes={"input_ids": PartialShape.parse(f"[{batch},8]")})
    assert _origin(doc, "attention_mask") == (
        "ones with right padding as a tokenizer pads a batch, row k ending k+1 tokens early but never padding alone "
        "(an attention mask, by its name, that ReduceMax 'pool/aten::max/ReduceMax' reduces: a pooling)"
    )
    rows = {row.layer_name: row for row in doc.layers}
    assert all(row.status == "ok" for row in rows.values()), rows


def _flux_transformer(path: Path) -> Path:
    """A diffusion transformer's inputs as optimum-intel exports FLUX's: image tokens ``hidden_states [?,?,16]``,
    text tokens ``encoder_hidden_states [?,?,32]``, and one rotary coordinate row per text token and per image token
    (``txt_ids``, ``img_ids`` ``[?,3]``), joined as the joint sequence they rotate; an RMS over each token's width."""
    rng = np.random.default_rng(0)
    image, text = (
        _parameter([-1, -1, 16], np.float32, "hidden_states"),
        _parameter([-1, -1, 32], np.float32, "encoder_hidden_states"),
    )
    txt, img = _parameter([-1, 3], np.float32, "txt_ids"), _parameter([-1, 3], np.float32, "img_ids")
    tokens = ops.concat([ops.matmul(text, ops.constant(rng.standard_normal((32, 8)).astype(np.float32)), False, False),
                         ops.matmul(image, ops.constant(rng.standard_normal((16, 8)).astype(np.float32)), False,
                                    False)], 1)  # fmt: skip
    table = ops.matmul(ops.concat([txt, img], 0), ops.constant(rng.standard_normal((3, 8)).astype(np.float32)),
                       False, False)  # fmt: skip
    rotated = ops.multiply(tokens, ops.unsqueeze(table, ops.constant(np.int64(0))))
    norm = ops.reduce_mean(ops.multiply(rotated, rotated), ops.constant(np.array([2], np.int64)), True, name="rms")
    ov.save_model(ov.Model([norm], [image, text, txt, img], "flux"), path, compress_to_fp16=False)
    return path


def test_a_diffusion_transformers_text_tokens_are_not_a_decoders_encoder_output(tmp_path: Path) -> None:
    """A diffusion transformer's text tokens (FLUX's ``encoder_hidden_states``, beside ``txt_ids`` whose rows must
    match them) were made a prompt's 8 tokens long, as a seq2seq decoder's encoder output is, while ``txt_ids`` took
    the fill: no fill made the rotary table as long as the joint sequence and the default audit was refused. Only a
    decoder (token ids, an encoder mask or a cross-attention past beside them) takes the encoder's length."""
    doc = _audit(_flux_transformer(tmp_path / "openvino_model.xml"), precision="f32")
    assert doc.error is None, doc.error
    shapes = {i.name: tuple(i.shape) for i in doc.inputs}
    assert shapes["encoder_hidden_states"][1] == shapes["txt_ids"][0], shapes
    assert not any(note.startswith("the encoder's inputs not given") for note in doc.notes), doc.notes
    (rms,) = doc.layers
    assert rms.ok, rms


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (np.array([[1.5, 2, 3]], np.float32), "input 'input_ids' holds float32 values but the model declares it i64"),
        (np.zeros((1, 2, 8), np.int64), "input 'input_ids' has shape [1, 2, 8] but the model declares it [?,?]"),
    ],
)
def test_a_given_model_input_that_does_not_fit_is_said_to_be_the_models(given: np.ndarray, said: str) -> None:
    """audit takes the model's inputs, not a layer's: an input given of the wrong type or rank was refused "but the
    layer expects"; the refusal names what the model declares, as OpenVINO's model reads it."""
    path = EXPORTS / "llama_int4" / "openvino_model.xml"
    port = next(p for p in ov.Core().read_model(path).inputs if p.get_any_name() == "input_ids")
    assert (port.get_element_type().get_type_name(), str(port.get_partial_shape())) == ("i64", "[?,?]")
    with pytest.raises(InputError) as refused:
        _audit(path, precision="f32", inputs={"input_ids": given})
    assert said in str(refused.value), refused.value


@pytest.mark.parametrize("how", ["inputs", "shapes"])
def test_the_inputs_made_beside_a_past_take_its_batch(tmp_path: Path, how: str) -> None:
    """A past of batch 2 given (or shaped) to an export without state: the ids, mask and positions were made at
    batch 1, and OpenVINO's shape inference refused the Concat of the past and the new keys, a refusal blamed on "the
    shapes given". They take the past's batch, as the step of generation that past is for; the model runs them as
    OpenVINO runs the same arrays."""
    ids, mask, positions, past, keys = _stateless_llm()
    ov.save_model(ov.Model([keys], [ids, mask, positions, past]), tmp_path / "m.xml", compress_to_fp16=False)
    value = np.random.default_rng(3).standard_normal((2, 2, 5, 4)).astype(np.float32)
    options: dict[str, Any] = ({"inputs": {"past_key_values.0.key": value}} if how == "inputs" else
                               {"shapes": {"past_key_values.0.key": PartialShape.static([2, 2, 5, 4])}})  # fmt: skip
    doc = _audit(tmp_path / "m.xml", precision="f32", **options)
    assert doc.error is None, doc.error
    shapes = {i.name: tuple(i.shape) for i in doc.inputs}
    assert shapes["input_ids"] == shapes["position_ids"] == (2, 8) and shapes["attention_mask"] == (2, 13), shapes
    from ovreduce.backends.openvino import model_inputs, read_model

    probe = read_model(tmp_path / "m.xml")
    arrays, _, _ = model_inputs(probe, options.get("inputs"), 0, shapes=options.get("shapes"))
    fed = {port.get_any_name(): arrays[i] for i, port in enumerate(probe.inputs)}
    expected = ov.Core().compile_model(str(tmp_path / "m.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})(fed)[0]
    assert expected.shape == (2, 2, 4), expected.shape


def _prompt_beside_a_past(tmp_path: Path) -> Path:
    """:func:`_stateless_llm` with the count of attended positions beside the keys: a mask's ReduceSum, which is the
    past and the new tokens at a step of generation with past."""
    ids, mask, positions, past, keys = _stateless_llm()
    seen = ops.reduce_sum(ops.convert(mask, "f32"), ops.constant(np.array([1], np.int64)), False, name="seen")
    ov.save_model(ov.Model([keys, seen], [ids, mask, positions, past]), tmp_path / "m.xml", compress_to_fp16=False)
    return tmp_path / "m.xml"


_PROMPT = {"input_ids": np.array([[3, 9, 4]], np.int64), "attention_mask": np.ones((1, 3), np.int64)}
_MADE = {name: "the prompt, 3 tokens through a tokenizer" for name in _PROMPT}


@pytest.mark.parametrize("batch", [1, 2])
def test_a_prompts_ids_and_mask_follow_the_past_given_as_made_ones_do(tmp_path: Path, batch: int) -> None:
    """A prompt's ids and mask beside a past of an export without state: the mask fed was the prompt's alone, which
    OpenVINO takes and computes a step no generation runs (its mask covers the past too); beside a past of batch 2,
    OpenVINO's shape inference refused the prompt's batch of 1. They follow the rules the inputs ovreduce makes
    follow: repeated over the past's batch, the mask preceded by ones over the past. OpenVINO, fed the same arrays,
    counts the past and the prompt's tokens as attended."""
    from ovreduce.backends.openvino import model_inputs, read_model

    path = _prompt_beside_a_past(tmp_path)
    shapes = {"past_key_values.0.key": PartialShape.static([batch, 2, 5, 4])}
    doc = _audit(path, precision="f32", inputs=_PROMPT, origins=_MADE, shapes=shapes)
    assert doc.error is None, doc.error
    described = {i.name: (tuple(i.shape), i.origin) for i in doc.inputs}
    assert described["input_ids"][0] == described["position_ids"][0] == (batch, 3), described
    assert described["attention_mask"][0] == (batch, 8), described
    assert "after 5 ones over the 5 past positions given" in described["attention_mask"][1], described
    assert not [note for note in doc.notes if "describe no one text" in note], doc.notes
    probe = read_model(path)
    arrays, _, _ = model_inputs(probe, _PROMPT, 0, shapes=shapes, origins=_MADE)
    fed = {port.get_any_name(): arrays[i] for i, port in enumerate(probe.inputs)}
    assert (fed["input_ids"] == np.repeat(_PROMPT["input_ids"], batch, axis=0)).all()
    seen = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})(fed)[1]
    assert seen.tolist() == [5 + 3] * batch, seen


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (
            {"shapes": {"input_ids": PartialShape.static([2, 8])}},
            "the shape given for input 'input_ids', [2,8], is "
            "of batch 2, where 'past_key_values.0.key' [1, 2, 5, 4] shaped is of batch 1",
        ),
        (
            {"shapes": {"input_ids": PartialShape.parse("[2,?]")}},
            "the shape given for input 'input_ids', [2,?], is "
            "of batch 2, where 'past_key_values.0.key' [1, 2, 5, 4] shaped is of batch 1",
        ),
        (
            {"inputs": {"input_ids": np.ones((2, 7), np.int64)}},
            "input 'input_ids' is given of batch 2 ([2, 7]), "
            "where 'past_key_values.0.key' [1, 2, 5, 4] shaped is of batch 1",
        ),
    ],
)
def test_ids_shaped_or_given_at_another_batch_than_the_past_are_refused_naming_both(
    tmp_path: Path, options: dict[str, dict[str, Any]], said: str
) -> None:
    """Ids shaped to batch 2 beside a past of batch 1 were fed at batch 1 without a word (a static shape), or refused
    with OpenVINO's Concat validation text (a shape left partly dynamic, ids given): a user who asked for a batch of 2
    got an audit of 1 reported as theirs. OpenVINO refuses the two together; the refusal names both."""
    path = _prompt_beside_a_past(tmp_path)
    shapes = {"past_key_values.0.key": PartialShape.static([1, 2, 5, 4]), **options.get("shapes", {})}
    with pytest.raises(InputError) as refused:
        _audit(path, precision="f32", inputs=options.get("inputs"), shapes=shapes)
    assert said in str(refused.value), refused.value
    fed = {
        "input_ids": np.ones((2, 8), np.int64),
        "attention_mask": np.ones((2, 13), np.int64),
        "position_ids": np.zeros((2, 8), np.int64),
        "past_key_values.0.key": np.zeros((1, 2, 5, 4), np.float32),
    }
    with pytest.raises(RuntimeError, match="Concat"):  # fmt: skip
        ov.Core().compile_model(str(path), "CPU")(fed)


def _token_dropout(path: Path) -> Path:
    """ESM-2's embeddings with token dropout (transformers' ``EsmEmbeddings``, ``token_dropout=True``, as optimum-intel
    exports them): each row's mask tokens counted, ``(input_ids == 4).sum(-1)``, scale the embeddings."""
    rng = np.random.default_rng(0)
    ids, mask = _parameter([-1, -1], np.int64, "input_ids"), _parameter([-1, -1], np.int64, "attention_mask")
    table = ops.constant((rng.standard_normal((1000, 16)) * 0.02).astype(np.float32))
    embedded = ops.gather(table, ids, ops.constant(np.int64(0)), name="word_embeddings/Gather")
    masked = ops.equal(ids, ops.constant(np.int64(4)), name="eq_mask_token")
    embedded = ops.select(ops.unsqueeze(masked, ops.constant(np.int64(-1))), ops.constant(np.float32(0)), embedded)
    lengths = ops.reduce_sum(mask, ops.constant(np.array([-1], np.int64)), False, name="lengths")
    count = ops.reduce_sum(ops.convert(masked, np.int64), ops.constant(np.array([-1], np.int64)), False, name="count")
    ratio = ops.divide(ops.convert(count, np.float32), ops.convert(lengths, np.float32))
    scale = ops.divide(ops.constant(np.float32(0.88)), ops.subtract(ops.constant(np.float32(1)), ratio))
    out = ops.multiply(embedded, ops.unsqueeze(scale, ops.constant(np.array([1, 2], np.int64))))
    ov.save_model(ov.Model([out, count], [ids, mask], "esm"), path, compress_to_fp16=False)
    return path


@pytest.mark.parametrize("batch", [1, 3])
def test_ids_a_model_compares_with_a_token_and_counts_hold_that_token(tmp_path: Path, batch: int) -> None:
    """ESM-2's token dropout counts each row's mask tokens (ReduceSum of ``input_ids == mask_token_id``): the ids made
    over the whole vocabulary practically never held that one token, so the count summed zeros, not established on
    every default audit, and the scaling it drives was never exercised. The ids made hold the token once in each row,
    as a fill-mask input does; OpenVINO, fed them, counts one per row."""
    from ovreduce.backends.openvino import model_inputs, read_model

    path = _token_dropout(tmp_path / "m.xml")
    shapes = {"input_ids": PartialShape.static([batch, 8])}
    doc = _audit(path, precision="f32", shapes=shapes)
    assert _origin(doc, "input_ids").endswith(
        "token 4 once in each row (Equal 'eq_mask_token' compares them with 4, which ReduceSum 'count' counts)"
    ), _origin(doc, "input_ids")
    rows = {row.layer_name: row for row in doc.layers}
    assert rows["count"].status == "ok", rows["count"]
    probe = read_model(path)
    arrays, _, _ = model_inputs(probe, None, 0, shapes=shapes)
    fed = {port.get_any_name(): arrays[i] for i, port in enumerate(probe.inputs)}
    counted = ov.Core().compile_model(str(path), "CPU")(fed)[1]
    assert counted.tolist() == [1] * batch, (counted, fed["input_ids"])
