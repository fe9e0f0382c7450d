"""The check document as JUnit XML, for CI systems: a test suite per model, a test case per reduction."""

from __future__ import annotations

from typing import Any

from ovreduce.cli.render.safe import xml_safe
from ovreduce.reports import CheckDocument, layer_path

__all__ = ["check_junit", "quoteattr"]


def check_junit(report: CheckDocument) -> str:
    """JUnit XML: a test suite per model, a test case per reduction plus one for whole-graph findings."""
    suites = []
    for m in report.models:
        cases: list[str] = []
        failures = 0
        errors = 0
        if m.error is not None:
            errors = 1
            cases.append(
                f'    <testcase classname={quoteattr(m.path)} name="read">\n'
                f"      <error type={quoteattr(m.error.code)} message={quoteattr(m.error.message)}/>\n"
                f"    </testcase>"
            )
        else:
            by_layer: dict[str | None, list[Any]] = {}
            for f in m.findings:
                by_layer.setdefault(None if f.layer_id is None else layer_path(f.body_path, f.layer_id), []).append(f)
            reduction_ids = {layer_path(r.body_path, r.layer_id) for r in m.reductions}
            for r in m.reductions:
                key = layer_path(r.body_path, r.layer_id)
                bad = [f for f in by_layer.get(key, []) if f.severity == "error"]
                name = f"{r.type} {key} {r.layer_name}"
                cases.append(_junit_case(m.path, name, bad))
                failures += bool(bad)
            rest = [f for lid, fs in by_layer.items() if lid not in reduction_ids for f in fs if f.severity == "error"]
            cases.append(_junit_case(m.path, "graph integrity", rest))
            failures += bool(rest)
        suites.append(
            f'  <testsuite name={quoteattr(m.path)} tests="{len(cases)}" failures="{failures}" '
            f'errors="{errors}">\n' + "\n".join(cases) + "\n  </testsuite>"
        )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="ovreduce check">\n'
        + "\n".join(suites)
        + "\n</testsuites>\n"
    )


def _junit_case(path: str, name: str, failures: list[Any]) -> str:
    head = f"    <testcase classname={quoteattr(path)} name={quoteattr(name)}"
    if not failures:
        return head + "/>"
    text = "\n".join(f"{f.code}: {f.message}" for f in failures)
    return (
        head + ">\n"
        f"      <failure type={quoteattr(failures[0].code)} message={quoteattr(failures[0].message)}>"
        f"{_xml_text(text)}</failure>\n    </testcase>"
    )


def _xml_text(text: str) -> str:
    return xml_safe(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def quoteattr(text: str) -> str:
    """An XML attribute value, quoted, with the characters XML 1.0 cannot carry escaped visibly."""
    escaped = _xml_text(text).replace('"', "&quot;").replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;")
    return f'"{escaped}"'
