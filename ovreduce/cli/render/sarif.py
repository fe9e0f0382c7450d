"""The check document as SARIF 2.1.0, for code-scanning tools: a rule per finding code.

Each rule has plain-text help (``help.text``); each result a region wherever its line is known: the line of the
finding, or, for a file that could not be read, the line its error names (``m.xml:12: ...`` or ``... at line 12,
column 5``). The tool's ``informationUri`` is :data:`DOCUMENTATION_URL`, the ``Documentation`` URL of the
package (``project.urls`` in pyproject.toml).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from ovreduce.check.findings import FINDINGS
from ovreduce.reports.check import CheckDocument
from ovreduce.reports.common import layer_path

__all__ = ["DOCUMENTATION_URL", "check_sarif"]

DOCUMENTATION_URL = "https://github.com/ovreduce/ovreduce#readme"
"""Where the tool is documented: the README (its "check" section lists every finding code). The project has no
published site; this is the ``Documentation`` URL of pyproject.toml's ``project.urls``, and moves with it."""
_CODES_URL = DOCUMENTATION_URL.removesuffix("#readme") + "#check"
_LINE_PREFIX = re.compile(r"^:(?P<line>[0-9]+)(?::(?P<column>[0-9]+))?:")
_AT_LINE = re.compile(r"\bat line (?P<line>[0-9]+)(?:, column (?P<column>[0-9]+))?")


def check_sarif(report: CheckDocument) -> str:
    """SARIF 2.1.0: one run, a rule per finding code, a result per finding (and per unreadable model)."""
    from ovreduce import __version__

    level = {"error": "error", "warning": "warning", "info": "note"}
    rules = [_rule(code, kind.meaning, kind.severity, level[kind.severity]) for code, kind in FINDINGS.items()]
    rules.append(_rule("unreadable-ir", "the file is not a readable OpenVINO IR", "error", "error"))
    results: list[dict[str, Any]] = []
    for m in report.models:
        if m.error is not None:
            results.append({
                "ruleId": "unreadable-ir", "level": "error",
                "message": {"text": f"[{m.error.code}] {m.error.message}"},
                "locations": [{"physicalLocation": _physical(m.path, _error_region(m.path, m.error.message))}],
            })  # fmt: skip
            continue
        for f in m.findings:
            location: dict[str, Any] = {
                "physicalLocation": _physical(m.path, {"startLine": f.line} if f.line else None)
            }
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
            "results": results,
        }],
    }  # fmt: skip
    return json.dumps(doc, indent=2) + "\n"


def _uri(path: str) -> str:
    """A relative URI reference for ``path``: '/' separators, everything else percent-encoded (spaces, '#',
    '%', '?', controls), as SARIF's artifactLocation.uri requires."""
    from urllib.parse import quote

    return quote(path.replace(os.sep, "/"), safe="/")


def _rule(code: str, meaning: str, severity: str, level: str) -> dict[str, Any]:
    """A reporting descriptor with plain-text help: what the code means, how serious it is, where to read on."""
    if code == "unreadable-ir":
        advice = (
            "The model was not checked: the message names the file, line and layer, and what was expected. Fix "
            "the file (or give its .bin) and check it again."
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


def _error_region(path: str, message: str) -> dict[str, int] | None:
    """The line (and column) an error message names: ``PATH:LINE: ...`` or ``... at line L, column C``."""
    match = _LINE_PREFIX.match(message.removeprefix(path)) if message.startswith(path) else None
    match = match or _AT_LINE.search(message)
    if match is None:
        return None
    region = {"startLine": int(match["line"])}
    if match["column"]:
        region["startColumn"] = int(match["column"])
    return region if region["startLine"] >= 1 else None
