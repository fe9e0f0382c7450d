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
ARTIFACTS = ROOT / "test-artifacts"
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
def browser() -> Iterator[object]:
    executable = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


def _upload(page: object, url: str, stem: str, folder: Path = SAMPLES / "broken") -> None:
    from playwright.sync_api import Page, expect

    assert isinstance(page, Page)
    page.goto(url + "/")
    page.set_input_files("#xml", str(folder / f"{stem}.xml"))
    page.set_input_files("#bin", str(folder / f"{stem}.bin"))
    page.click("#check")
    expect(page.locator("#report")).to_be_visible(timeout=30_000)


def test_mismatch_is_highlighted_and_a_layer_runs(server: str, browser: object) -> None:
    """Upload a sample with a known stale output dim: its row is highlighted with the finding's message;
    then run another layer from the keyboard and see the backends agree, with a picture of the errors."""
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

    # Keyboard only: focus the row's Run button, press Enter, then Enter on the run form's button.
    page.get_by_role("button", name="Run layer mean_channels").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#run-button")).to_be_focused()
    page.keyboard.press("Enter")
    verdict = page.locator("#run-verdict")
    expect(verdict).to_contain_text("Agree", timeout=60_000)
    expect(page.locator("#run-result")).to_contain_text("numpy vs openvino:CPU: agree")
    expect(page.locator("#error-strip svg rect").first).to_be_visible()
    expect(page.locator("#error-histogram")).to_contain_text("Histogram of absolute errors")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "web-page.png"), full_page=True)
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
    page.get_by_role("button", name="Run layer u8_mean").click()
    page.click("#run-button")
    expect(page.locator("#run-verdict")).to_contain_text("Disagree", timeout=60_000)
    expect(page.locator("#run-result")).to_contain_text("First mismatch at")
    page.close()


def test_narrow_window_has_no_page_level_horizontal_scroll(server: str, browser: object) -> None:
    """On a phone-sized window the page reflows; only the table scrolls sideways, inside its own region."""
    from playwright.sync_api import Browser, expect

    assert isinstance(browser, Browser)
    page = browser.new_page(viewport={"width": 375, "height": 800})
    _upload(page, server, "stale_output")
    expect(page.locator("#reductions")).to_be_visible()
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 1, f"the page scrolls sideways by {overflow}px on a 375px window"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "web-page-narrow.png"), full_page=True)
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
