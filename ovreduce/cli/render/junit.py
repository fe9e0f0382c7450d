"""The check document as JUnit XML, for CI systems: a test suite per model, a test case per reduction.

The layout is the common one CI servers read (Jenkins, GitLab, Azure; ``tests/data/junit.xsd`` is the schema
the tests validate it against)::

    <testsuites name="ovreduce check" tests= failures= errors= time=>
      <testsuite name=PATH tests= failures= errors= skipped="0" time=>
        <properties> ir_version, layer_count </properties>
        <testcase classname=PATH name="ReduceMean 8 mean_hw_keep">
          <failure type=CODE message=...>every error finding of the layer</failure>
          <system-out>its warnings (and infos), one a line</system-out>
        </testcase>
        ... one "graph integrity" case for the findings of other layers; a "read" case with <error> for a model
        that could not be read, a "check" case with <error> for one read but not checked
        <system-out>the model's notes</system-out>
      </testsuite>
    </testsuites>

``time`` is in seconds: the time each model took to read and check (given by the caller, who measured it where the
model was checked), on its suite, and the run's on ``testsuites`` (their sum, unless the caller gives the run's wall
time: with models checked at once, less). A model is checked as a whole, so its cases carry no time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ovreduce.cli.render.safe import xml_safe
from ovreduce.reports.check import CheckDocument, Finding, ModelCheck
from ovreduce.reports.common import layer_path

__all__ = ["check_junit", "quoteattr"]


def check_junit(report: CheckDocument, *, seconds: Sequence[float] | None = None, total: float | None = None) -> str:
    """JUnit XML: a test suite per model, a test case per reduction plus one for whole-graph findings.

    ``seconds``: the time each model of ``report.models`` took, in their order (the suites' ``time`` attributes;
    left out when not given); ``total``: the run's (``testsuites``'), by default their sum (models checked one at a
    time; with several at once, the run takes less than the sum).
    """
    if seconds is not None and len(seconds) != len(report.models):
        raise ValueError(f"{len(seconds)} times for {len(report.models)} models")
    suites: list[str] = []
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for i, m in enumerate(report.models):
        suite, counts = _suite(m, None if seconds is None else seconds[i])
        suites.append(suite)
        for key in totals:
            totals[key] += counts[key]
    time = "" if seconds is None else f" time={_time(sum(seconds) if total is None else total)}"
    head = (
        f'<testsuites name="ovreduce check" tests="{totals["tests"]}" failures="{totals["failures"]}" '
        f'errors="{totals["errors"]}"{time}>'
    )
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + head + "\n" + "".join(suites) + "</testsuites>\n"


def _suite(m: ModelCheck, seconds: float | None) -> tuple[str, dict[str, int]]:
    cases: list[str] = []
    failures = errors = 0
    if m.error is not None:
        errors = 1
        cases.append(
            f'    <testcase classname={quoteattr(m.path)} name="{"check" if m.not_checked else "read"}">\n'
            f"      <error type={quoteattr(m.error.code)} message={quoteattr(m.error.message)}/>\n"
            f"    </testcase>\n"
        )
    else:
        by_layer: dict[str | None, list[Finding]] = {}
        for f in m.findings:
            by_layer.setdefault(None if f.layer_id is None else layer_path(f.body_path, f.layer_id), []).append(f)
        reduction_ids = {layer_path(r.body_path, r.layer_id) for r in m.reductions}
        for r in m.reductions:
            key = layer_path(r.body_path, r.layer_id)
            cases.append(_case(m.path, f"{r.type} {key} {r.layer_name}", by_layer.get(key, [])))
            failures += any(f.severity == "error" for f in by_layer.get(key, []))
        rest = [f for lid, fs in by_layer.items() if lid not in reduction_ids for f in fs]
        cases.append(_case(m.path, "graph integrity", rest))
        failures += any(f.severity == "error" for f in rest)
    properties = "".join(
        f"      <property name={quoteattr(name)} value={quoteattr(str(value))}/>\n"
        for name, value in (("ir_version", m.ir_version), ("layer_count", m.layer_count))
        if value is not None
    )
    time = "" if seconds is None else f" time={_time(seconds)}"
    suite = (
        f'  <testsuite name={quoteattr(m.path)} tests="{len(cases)}" failures="{failures}" errors="{errors}" '
        f'skipped="0"{time}>\n'
        + (f"    <properties>\n{properties}    </properties>\n" if properties else "")
        + "".join(cases)
        + (f"    <system-out>{_xml_text(_lines(m.notes))}</system-out>\n" if m.notes else "")
        + "  </testsuite>\n"
    )
    return suite, {"tests": len(cases), "failures": failures, "errors": errors}


def _case(path: str, name: str, findings: list[Any]) -> str:
    """A test case: failed by the error findings; the others (warnings, infos) in its ``system-out``."""
    head = f"    <testcase classname={quoteattr(path)} name={quoteattr(name)}"
    bad = [f for f in findings if f.severity == "error"]
    other = [f for f in findings if f.severity != "error"]
    if not findings:
        return head + "/>\n"
    body = ""
    if bad:
        text = _lines(_finding_line(f) for f in bad)
        body += (
            f"      <failure type={quoteattr(bad[0].code)} message={quoteattr(bad[0].message)}>"
            f"{_xml_text(text)}</failure>\n"
        )
    if other:
        body += f"      <system-out>{_xml_text(_lines(_finding_line(f) for f in other))}</system-out>\n"
    return head + ">\n" + body + "    </testcase>\n"


def _finding_line(f: Any) -> str:
    where = f" (line {f.line})" if f.line else ""
    return f"{f.severity} {f.code}{where}: {f.message}"


def _lines(lines: Any) -> str:
    return "\n".join(lines)


def _time(seconds: float) -> str:
    return f'"{max(seconds, 0.0):.3f}"'


def _xml_text(text: str) -> str:
    return xml_safe(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def quoteattr(text: str) -> str:
    """An XML attribute value, quoted, with the characters XML 1.0 cannot carry escaped visibly."""
    escaped = _xml_text(text).replace('"', "&quot;").replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;")
    return f'"{escaped}"'
