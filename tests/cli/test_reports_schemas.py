"""``ovreduce check --format junit|sarif`` validated against the formats' schemas (vendored in tests/data).

* ``tests/data/junit.xsd``: the JUnit layout CI servers read (its header says where it comes from);
* ``tests/data/sarif-schema-2.1.0-rtm.4.json``: the SARIF 2.1.0 JSON schema shipped in the ``sarif-om`` 1.0.4
  sdist on PyPI (Microsoft's SARIF Python object model, MIT licence: the ``.LICENSE`` file beside it).

The models checked cover every kind of case: clean ones, error, warning and info findings, a reshape, files
that cannot be read (with and without a line in their error).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from lxml import etree

from ovreduce.cli.render.sarif import DOCUMENTATION_URL

from .inprocess import run_cli

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
SAMPLES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "ir_samples").rglob("*.xml"))


@pytest.fixture
def models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every sample, plus a file with a bad element type (its line is in the error's message only), truncated XML
    (the parser's line and column), an empty file (no line) and a name that needs escaping in both formats. (A
    missing file is a usage error, not a report.)"""
    monkeypatch.chdir(ROOT)
    bad = tmp_path / "bad type.xml"
    bad.write_text(
        '<?xml version="1.0"?>\n<net name="x" version="11">\n<layers>\n'
        '<layer id="0" name="a" type="Parameter" version="opset1">\n<data shape="1,2" element_type="f99"/>\n'
        "</layer>\n</layers>\n</net>\n"
    )
    truncated = tmp_path / "a&b<c>.xml"
    truncated.write_text("<net>\n<oops")
    empty = tmp_path / "empty.xml"
    empty.write_text("")
    return [*SAMPLES, str(bad), str(truncated), str(empty)]


def check(capsys: pytest.CaptureFixture[str], fmt: str, paths: list[str]) -> str:
    status, out, _ = run_cli(capsys, "check", *paths, "--format", fmt, *(["-v"] if fmt == "text" else []))
    assert status == 2  # some models cannot be read
    return out


def test_junit_is_valid_and_carries_warnings_and_times(capsys: pytest.CaptureFixture[str], models: list[str]) -> None:
    out = check(capsys, "junit", models)
    schema = etree.XMLSchema(etree.parse(str(DATA / "junit.xsd")))
    doc = etree.fromstring(out.encode())
    schema.assertValid(doc)

    suites = doc.findall("testsuite")
    assert len(suites) == len(models)
    times = [float(s.get("time")) for s in suites]
    assert all(t >= 0 for t in times)
    # each suite's time is its model's own; the run's, with models checked at once, is its wall time: less than
    # their sum, not less than any one
    assert float(doc.get("time")) >= max(times) - 0.002
    assert int(doc.get("tests")) == sum(int(s.get("tests")) for s in suites)
    assert int(doc.get("errors")) == 3  # the three unreadable files
    props = {p.get("name"): p.get("value") for p in suites[0].iter("property")}
    assert set(props) == {"ir_version", "layer_count"}

    # a warning is in the system-out of its layer's case, which does not fail for it
    suite = next(s for s in suites if s.get("name").endswith("broken/missing_keep_dims.xml"))
    case = next(c for c in suite.iter("testcase") if c.find("system-out") is not None)
    assert case.find("failure") is None
    assert "keep-dims-missing (line " in case.findtext("system-out")
    # an error finding fails its case; a model that cannot be read errs
    stale = next(s for s in suites if s.get("name").endswith("broken/stale_output.xml"))
    assert stale.get("failures") == "1"
    empty = next(s for s in suites if s.get("name").endswith("empty.xml"))
    assert empty.find("testcase/error").get("type") == "ir.syntax"


def test_sarif_is_valid_and_complete(capsys: pytest.CaptureFixture[str], models: list[str]) -> None:
    doc: dict[str, Any] = json.loads(check(capsys, "sarif", models))
    schema = json.loads((DATA / "sarif-schema-2.1.0-rtm.4.json").read_text())
    jsonschema.Draft4Validator.check_schema(schema)
    errors = [e.message for e in jsonschema.Draft4Validator(schema).iter_errors(doc)]
    assert errors == []

    driver = doc["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == DOCUMENTATION_URL
    for rule in driver["rules"]:
        help_text = rule["help"]["text"]
        assert help_text and "](" not in help_text and "**" not in help_text and "`" not in help_text  # no Markdown
        assert rule["shortDescription"]["text"].lower() in help_text.lower()

    results = doc["runs"][0]["results"]
    regions = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].rsplit("/", 1)[-1]: r["locations"][0][
            "physicalLocation"
        ].get("region")
        for r in results
        if r["ruleId"] == "unreadable-ir"
    }
    assert regions == {
        "bad%20type.xml": {"startLine": 4},  # the reader knows the layer whose element type is wrong
        "a%26b%3Cc%3E.xml": {"startLine": 2, "startColumn": 6},  # the parser's position: past "<oops", 1-based
        "empty.xml": None,  # no line to name
    }
    findings = [r for r in results if r["ruleId"] != "unreadable-ir"]
    assert findings and all("region" in r["locations"][0]["physicalLocation"] for r in findings)


def test_information_uri_is_the_packages_documentation_url() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["urls"]["Documentation"] == DOCUMENTATION_URL
    assert DOCUMENTATION_URL.startswith("https://")
