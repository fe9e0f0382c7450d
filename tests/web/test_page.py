"""The web page in a real browser: Debian's chromium driven by Playwright against the real server.

Skipped only where chromium is not installed, unless OVREDUCE_REQUIRE_BROWSER=1 (CI), where that fails.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "ir_samples"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
]


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("OVREDUCE_REQUIRE_BROWSER", "0") not in ("", "0"):
            pytest.fail("chromium is not installed, and OVREDUCE_REQUIRE_BROWSER is set (apt-get install chromium)")
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    return found


# The server: api.server.serve with the settings in argv[1] (this checkout's packages come first).
_SERVE = (
    "import json, sys; from api.config import Settings; from api.server import serve; "
    "serve(Settings(**json.loads(sys.argv[1])))"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    store = tmp_path_factory.mktemp("store")
    port = _free_port()
    settings = {"host": "127.0.0.1", "port": port, "store": str(store)}
    proc = subprocess.Popen(
        [sys.executable, "-c", _SERVE, json.dumps(settings)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                out = proc.stdout.read() if proc.stdout else ""
                pytest.fail(f"the server did not come up:\n{out}")
            time.sleep(0.2)
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go: OVREDUCE_ARTIFACTS when set (CI keeps it), else a pytest temporary folder."""
    folder = os.environ.get("OVREDUCE_ARTIFACTS", "").strip()
    path = Path(folder) if folder else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    executable = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


def _upload(page: object, url: str, stem: str, folder: Path = SAMPLES / "broken", *, weights: bool = True) -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    page.goto(url + "/")
    page.set_input_files("#xml", str(folder / f"{stem}.xml"))
    if weights:
        page.set_input_files("#bin", str(folder / f"{stem}.bin"))
    page.click("#check")
    if weights:
        expect(page.locator("#report")).to_be_visible(timeout=30_000)


def test_mismatch_is_highlighted_and_a_layer_runs(server: str, browser: object, artifacts: Path) -> None:
    """Upload a sample with a known stale output dim: its row is highlighted with the finding's message and
    the focus is on the result; then run another layer in one step from the keyboard and see the backends
    agree, with a picture of the errors, the focus on the verdict."""
    from playwright.sync_api import Browser, expect

    assert isinstance(browser, Browser)
    page = browser.new_page()
    _upload(page, server, "stale_output")
    row = page.locator("#reductions tbody tr", has_text="mean_hw_keep")
    expect(row).to_have_class(re.compile(r"\brow-error\b"))
    expect(row).to_contain_text("reduce-output-mismatch")
    expect(row).to_contain_text("declares [6,12,1] but [6,12,1,1] is inferred")
    expect(row.locator("td").nth(5)).to_have_text("[6,12,1]")  # declared
    expect(row.locator("td").nth(6)).to_have_text("[6,12,1,1]")  # inferred
    clean = page.locator("#reductions tbody tr", has_text="mean_channels")
    expect(clean).not_to_have_class(re.compile(r"\brow-error\b"))
    expect(page.locator("#summary")).to_contain_text("inconsistent")
    expect(page.locator("#summary")).to_be_focused()  # after Check, the focus moves to the result

    # Keyboard only: focus the row's Run button and press Enter: the layer runs (one step).
    page.get_by_role("button", name="Run layer mean_channels").focus()
    page.keyboard.press("Enter")
    verdict = page.locator("#run-verdict")
    expect(verdict).to_contain_text("Agree", timeout=60_000)
    expect(verdict).to_be_focused()  # after a run, the focus is on its verdict
    expect(page.locator("#run-layer")).to_have_value("4")
    expect(page.locator("#run-contradiction")).to_have_count(0)  # this layer's declared output is right
    expect(page.locator("#run-result")).to_contain_text("numpy vs openvino:CPU: agree")
    expect(page.locator("#error-strip svg rect").first).to_be_visible()
    expect(page.locator("#error-histogram")).to_contain_text("Histogram of absolute errors")
    page.screenshot(path=str(artifacts / "web-page.png"), full_page=True)
    page.close()


def test_disagreement_is_shown(server: str, browser: object, tmp_path: Path) -> None:
    """A u8 ReduceMean that OpenVINO's CPU plugin computes wrongly (its accumulator saturates): the page
    says the backends disagree and where."""
    import numpy as np
    import openvino as ov
    from openvino import opset13 as ops
    from playwright.sync_api import Browser, expect

    assert isinstance(browser, Browser)
    x = ops.parameter([4, 64], ov.Type.u8, name="x")
    mean = ops.reduce_mean(x, ops.constant(np.array([1], np.int64)), False)
    mean.set_friendly_name("u8_mean")
    ov.save_model(ov.Model([mean], [x]), str(tmp_path / "u8.xml"))
    page = browser.new_page()
    _upload(page, server, "u8", tmp_path)
    page.get_by_role("button", name="Run layer u8_mean").click()  # one step: the row's button runs it
    expect(page.locator("#run-verdict")).to_contain_text("Disagree", timeout=60_000)
    expect(page.locator("#run-result")).to_contain_text("First mismatch at")
    page.close()


@pytest.mark.parametrize("precision", ["f16", "bf16"])
def test_the_precision_cell_says_what_the_reduction_executed_in(server: str, browser: object, precision: str) -> None:
    """The backends table's precision cell says what the run's JSON says, as ``ovreduce run``'s text does: a
    reduction OpenVINO executed in f32 inside a bf16 graph is not said to run in bf16."""
    from playwright.sync_api import Browser, expect

    from ovreduce.cli.render.text import _run_precision

    assert isinstance(browser, Browser)
    page = browser.new_page()
    _upload(page, server, "stale_output")
    page.select_option("#run-precision", precision)
    page.select_option("#run-layer", "4")
    with page.expect_response(lambda r: r.url.endswith("/run")) as answer:
        page.click("#run-button")
    (result,) = [r for r in answer.value.json()["results"] if r["backend"].startswith("openvino")]
    expected = _run_precision(result["precision"], result["effective_precision"], result["runtime_precision"])
    row = page.locator("#run-backends tbody tr", has_text="openvino")
    expect(row.locator("td").nth(4)).to_have_text(expected, timeout=60_000)
    page.close()


def test_narrow_window_has_no_page_level_horizontal_scroll(server: str, browser: object, artifacts: Path) -> None:
    """On a phone-sized window the page reflows; only the table scrolls sideways, inside its own region."""
    from playwright.sync_api import Browser, expect

    assert isinstance(browser, Browser)
    page = browser.new_page(viewport={"width": 375, "height": 800})
    _upload(page, server, "stale_output")
    expect(page.locator("#reductions")).to_be_visible()
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 1, f"the page scrolls sideways by {overflow}px on a 375px window"
    page.screenshot(path=str(artifacts / "web-page-narrow.png"), full_page=True)
    page.close()


# Elements of the page whose right edge lies past the window, or that scroll sideways inside themselves.
_CUT_OFF = """() => {
  const width = document.documentElement.clientWidth;
  const out = [];
  for (const e of document.querySelectorAll("#main *")) {
    if (e.closest("[hidden]") || e.closest(".visually-hidden") || e.closest("thead")) continue;
    const box = e.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    const name = `${e.tagName}#${e.id}.${e.className.baseVal ?? e.className}`;
    if (box.right > width + 1) out.push(`${name} right ${box.right}`);
    if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX !== "visible")
      out.push(`${name} scrolls ${e.scrollWidth} > ${e.clientWidth}`);
  }
  return out;
}"""


def test_at_400_px_a_run_of_a_stale_layer_is_whole_and_explained(server: str, browser: object, artifacts: Path) -> None:
    """On a 400 px window, the Run button of the layer whose declared output is stale runs it: nothing is cut
    off (the backends table stacks), the summary says the declared output contradicts the inferred one, and
    the neighbourhood picture shows its producers and consumers with their shapes."""
    from playwright.sync_api import Browser, expect

    assert isinstance(browser, Browser)
    page = browser.new_page(viewport={"width": 400, "height": 900})
    _upload(page, server, "stale_output")
    page.get_by_role("button", name="Run layer mean_hw_keep").click()
    expect(page.locator("#run-verdict")).to_contain_text("Agree", timeout=60_000)
    expect(page.locator("#run-contradiction")).to_contain_text(
        "declared output [6,12,1] contradicts the inferred [6,12,1,1]; the backends computed [6,12,1,1] (numpy)"
    )
    picture = page.locator("#neighbourhood svg")
    expect(picture).to_be_visible()
    for name in ("data", "Constant_3", "mean_hw_keep", "Result_14"):  # producers, the layer, its consumer
        expect(picture.locator("text", has_text=name).first).to_be_visible()
    expect(picture).to_contain_text("[6,12,10,24]")  # the data's shape on its edge
    expect(picture).to_contain_text("[6,12,1] ≠ [6,12,1,1]")  # the stale edge, marked
    expect(page.locator("#neighbourhood figcaption")).to_contain_text(
        "fed by data (Parameter, [6,12,10,24]), Constant_3 (Const, [2]); "
        "it declares its output [6,12,1] but [6,12,1,1] is inferred; it feeds Result_14 (Result, declares [6,12,1])"
    )
    assert page.evaluate(_CUT_OFF) == []
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 1, f"the page scrolls sideways by {overflow}px on a 400px window"
    page.screenshot(path=str(artifacts / "web-page-400px-run.png"), full_page=True)
    page.locator("#neighbourhood").screenshot(path=str(artifacts / "neighbourhood-400px.png"))
    page.close()


def test_axes_are_shown_as_integers(server: str, browser: object, artifacts: Path) -> None:
    """RMSNorm's ReduceMean over the last axis shows axes [-1] (an axis, not a dynamic dim '?'), in the table
    and in the run's summary."""
    from playwright.sync_api import Browser, expect

    assert isinstance(browser, Browser)
    page = browser.new_page()
    _upload(page, server, "rmsnorm", SAMPLES)
    row = page.locator("#reductions tbody tr", has_text="rmsnorm/variance")
    expect(row.locator("td").nth(3)).to_have_text("[-1]")
    row.get_by_role("button").click()
    expect(page.locator("#run-verdict")).to_contain_text("Agree", timeout=60_000)
    expect(page.locator("#run-result")).to_contain_text("axes [-1], keep_dims true")
    expect(page.locator("#run-notes")).to_contain_text("dynamic dimension 1 (?) set to 1")  # what the run chose
    expect(page.locator("#neighbourhood svg")).to_contain_text("Power_144")
    expect(page.locator("#neighbourhood svg")).to_contain_text("Add_150")
    page.screenshot(path=str(artifacts / "web-page-rmsnorm.png"), full_page=True)
    page.locator("#neighbourhood").screenshot(path=str(artifacts / "neighbourhood.png"))
    page.close()


def test_an_xml_without_its_weights_is_explained(server: str, browser: object) -> None:
    """An .xml with Const layers uploaded alone cannot be read: the page says to choose its .bin too, in its
    own words (not the API's form-field wording)."""
    from playwright.sync_api import Browser, expect

    assert isinstance(browser, Browser)
    page = browser.new_page()
    _upload(page, server, "rmsnorm", SAMPLES, weights=False)
    status = page.locator("#upload-status")
    expect(status).to_contain_text(
        "rmsnorm.xml has Const layers whose values are stored in its weights file, so it cannot be read alone: "
        "choose rmsnorm.bin as the weights (.bin) as well, then press Check again.",
        timeout=30_000,
    )
    expect(status).not_to_contain_text("field")
    expect(page.locator("#report")).to_be_hidden()
    page.close()


def test_the_content_security_policy_blocks_nothing_of_our_own(server: str, browser: object) -> None:
    """The page and /docs (Swagger UI) work under the service's CSP: no violation is reported."""
    from playwright.sync_api import Browser, ConsoleMessage, expect

    assert isinstance(browser, Browser)
    page = browser.new_page()
    violations: list[str] = []

    def console(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text or "Content-Security-Policy" in message.text:
            violations.append(message.text)

    page.on("console", console)
    page.add_init_script(
        "document.addEventListener('securitypolicyviolation',"
        " e => console.error('Content Security Policy violation: ' + e.violatedDirective + ' ' + e.blockedURI))"
    )
    response = page.goto(server + "/")
    assert response is not None and "frame-ancestors 'none'" in response.headers["content-security-policy"]
    _upload(page, server, "stale_output")
    page.goto(server + "/docs")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("ovreduce", timeout=30_000)
    expect(page.locator(".opblock").first).to_be_visible()
    assert violations == []
    page.close()
