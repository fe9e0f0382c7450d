"""The check document as SARIF 2.1.0, for code-scanning tools: a rule per finding code."""

from __future__ import annotations

import json
import os
from typing import Any

from ovreduce.check.findings import FINDINGS
from ovreduce.reports import CheckDocument, layer_path

__all__ = ["check_sarif"]


def check_sarif(report: CheckDocument) -> str:
    """SARIF 2.1.0: one run, a rule per finding code, a result per finding (and per unreadable model)."""
    from ovreduce import __version__

    level = {"error": "error", "warning": "warning", "info": "note"}
    rules = [
        {
            "id": code,
            "shortDescription": {"text": kind.meaning},
            "defaultConfiguration": {"level": level[kind.severity]},
        }
        for code, kind in FINDINGS.items()
    ]
    rules.append({"id": "unreadable-ir", "shortDescription": {"text": "the file is not a readable OpenVINO IR"},
                  "defaultConfiguration": {"level": "error"}})  # fmt: skip
    results: list[dict[str, Any]] = []
    for m in report.models:
        if m.error is not None:
            results.append({
                "ruleId": "unreadable-ir", "level": "error",
                "message": {"text": f"[{m.error.code}] {m.error.message}"},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(m.path)}}}],
            })  # fmt: skip
            continue
        for f in m.findings:
            physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(m.path)}}
            if f.line:
                physical["region"] = {"startLine": f.line}
            location: dict[str, Any] = {"physicalLocation": physical}
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
                                "informationUri": "https://github.com/openvinotoolkit/openvino"}},
            "results": results,
        }],
    }  # fmt: skip
    return json.dumps(doc, indent=2) + "\n"


def _uri(path: str) -> str:
    """A relative URI reference for ``path``: '/' separators, everything else percent-encoded (spaces, '#',
    '%', '?', controls), as SARIF's artifactLocation.uri requires."""
    from urllib.parse import quote

    return quote(path.replace(os.sep, "/"), safe="/")
