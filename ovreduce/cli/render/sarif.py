"""The check document as SARIF 2.1.0, for code-scanning tools: a rule per finding code.

Each rule has plain-text help (``help.text``); each result a region wherever its line is known: the line of the
finding's layer, or, for a file that could not be read, the reader's own position of the problem (the error's
``line`` and ``column``). Regions are 1-based, as SARIF requires, and never read out of a message, which may
quote the file's text (a layer named ``a at line 77, column 0`` sets none); columns count characters (the run's
``columnKind`` says ``unicodeCodePoints``), as libxml2 does. The tool's ``informationUri`` is
:data:`DOCUMENTATION_URL`, the ``Documentation`` URL of the package (``project.urls`` in pyproject.toml).
"""

from __future__ import annotations

import json
import os
from typing import Any

from ovreduce.check.findings import FINDINGS
from ovreduce.reports.check import CheckDocument
from ovreduce.reports.common import layer_path, unicode_text

__all__ = ["DOCUMENTATION_URL", "check_sarif"]

DOCUMENTATION_URL = "https://github.com/ovreduce/ovreduce#readme"
"""Where the tool is documented: the README, which links the pages of docs/. The project has no published site;
this is the ``Documentation`` URL of pyproject.toml's ``project.urls``, and moves with it."""
_CODES_URL = DOCUMENTATION_URL.removesuffix("#readme") + "/blob/main/docs/cli.md#finding-codes"  # every code


def check_sarif(report: CheckDocument) -> str:
    """SARIF 2.1.0: one run, a rule per finding code, a result per finding (and per model unreadable
    or not checked)."""
    from ovreduce import __version__

    level = {"error": "error", "warning": "warning", "info": "note"}
    rules = [_rule(code, kind.meaning, kind.severity, level[kind.severity]) for code, kind in FINDINGS.items()]
    rules.append(_rule("unreadable-ir", "the file is not a readable OpenVINO IR", "error", "error"))
    rules.append(_rule("model-not-checked", "the model was read but could not be checked", "error", "error"))
    results: list[dict[str, Any]] = []
    for m in report.models:
        if m.error is not None:
            results.append({
                "ruleId": "model-not-checked" if m.not_checked else "unreadable-ir", "level": "error",
                "message": {"text": f"[{m.error.code}] {m.error.message}"},
                "locations": [{"physicalLocation": _physical(m.path, _region(m.error.line, m.error.column))}],
            })  # fmt: skip
            continue
        for f in m.findings:
            location: dict[str, Any] = {"physicalLocation": _physical(m.path, _region(f.line, None))}
            if f.layer_id is not None:
                location["logicalLocations"] = [
                    {
                        "name": f.layer_name,
                        "fullyQualifiedName": f"layer {layer_path(f.body_path, f.layer_id)}",
                        "kind": "object",
                    }
                ]
            results.append({
                "ruleId": f.code, "level": level[f.severity], "message": {"text": f.message},
                "locations": [location],
            })  # fmt: skip
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "ovreduce", "version": __version__, "rules": rules,
                                "informationUri": DOCUMENTATION_URL}},
            "columnKind": "unicodeCodePoints",  # libxml2 counts a line's characters, not UTF-16 units
            "results": results,
        }],
    }  # fmt: skip
    return json.dumps(unicode_text(doc), indent=2) + "\n"  # a name's undecodable bytes as \xff, as in JSON


def _uri(path: str) -> str:
    """A relative URI reference for ``path``: '/' separators, everything else percent-encoded (spaces, '#',
    '%', '?', controls), as SARIF's artifactLocation.uri requires."""
    from urllib.parse import quote

    return quote(os.fsencode(path.replace(os.sep, "/")), safe="/")  # a name's undecodable bytes as %XX


def _rule(code: str, meaning: str, severity: str, level: str) -> dict[str, Any]:
    """A reporting descriptor with plain-text help: what the code means, how serious it is, where to read on."""
    if code == "unreadable-ir":
        advice = (
            "The model was not checked: the message names the file, line and layer, and what was expected. Fix "
            "the file (or give its .bin) and check it again."
        )
    elif code == "model-not-checked":
        advice = (
            "The file was read, but the model was not checked: the message says why (an option it cannot take, a "
            "process that ended) and what was expected. Fix that and check it again."
        )
    elif severity == "error":
        advice = "The model as written is wrong: OpenVINO would refuse it or compute other shapes than it declares."
    elif severity == "warning":
        advice = "OpenVINO reads the model, but not as it appears to be meant; check the layer."
    else:
        advice = "For information: nothing is wrong; shown in text output with --verbose."
    text = f"{meaning[0].upper()}{meaning[1:]} ({severity}). {advice} Finding codes: {_CODES_URL}"
    return {
        "id": code,
        "shortDescription": {"text": meaning},
        "help": {"text": text},
        "helpUri": _CODES_URL,
        "defaultConfiguration": {"level": level},
    }


def _physical(path: str, region: dict[str, int] | None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(path)}}
    if region is not None:
        physical["region"] = region
    return physical


def _region(line: int | None, column: int | None) -> dict[str, int] | None:
    """A SARIF region: 1-based ``startLine`` (and ``startColumn``); none where the line is not known."""
    if line is None or line < 1:
        return None
    region = {"startLine": line}
    if column is not None and column >= 1:
        region["startColumn"] = column
    return region
