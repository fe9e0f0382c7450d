"""The audit's cost grows linearly with the model: its per-item steps are counted (:class:`AuditWork`,
filled by :func:`audit_model`) on generated chains of 50 and 200 reductions. Counts, not times: the test
fails when any step starts walking something once per reduction (a search of the outputs per mark, a walk
of the ops per node...), whatever the machine's speed."""

from __future__ import annotations

import dataclasses

import pytest

from ovreduce import load_ir
from ovreduce.audit import AuditWork, audit_model

from . import ov_models

SIZES = (50, 200)
SLACK = 0.25  # the fixed part of a model (its input, output, the final outputs' ports)


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> dict[int, AuditWork]:
    folder = tmp_path_factory.mktemp("audit_scaling")
    counts = {}
    for n in SIZES:
        counts[n] = AuditWork()
        doc = audit_model(load_ir(ov_models.many_reductions(folder / f"chain{n}.xml", n)), precision="bf16",
                          work=counts[n])  # fmt: skip
        assert doc.error is None
        assert len(doc.layers) == n
    return counts


def test_every_step_is_counted(work: dict[int, AuditWork]) -> None:
    small, large = work[SIZES[0]], work[SIZES[1]]
    assert large.reductions_checked == SIZES[1]
    assert large.sort_keys == SIZES[1]  # each sort key computed once
    for step in dataclasses.fields(AuditWork):
        assert getattr(small, step.name) > 0, step.name


@pytest.mark.parametrize("step", [f.name for f in dataclasses.fields(AuditWork)] + ["total"])
def test_the_work_grows_linearly(work: dict[int, AuditWork], step: str) -> None:
    """Four times the reductions: at most four times the work (plus a little for the fixed part), and at
    least three times (the counter does count what grows)."""
    ratio = SIZES[1] / SIZES[0]
    small, large = getattr(work[SIZES[0]], step), getattr(work[SIZES[1]], step)
    assert 3 * small <= large <= (ratio + SLACK) * small, (step, small, large)
