"""The explorer's page in a real browser: Debian's Chromium, driven by
Selenium through Debian's chromedriver, opens the page, types a sentence,
waits for both runs' outputs, points at an output token and checks that the
heatmap outlines its row and lists its weights (those the API returned);
then translates a test line (gold links drawn, AER shown), grows a source,
and draws the curve.

CI installs the browser (.ci/run, as root: apt-get install chromium
chromium-driver). Where there is none the test is skipped and says why
(pytest -ra prints the reason), never silently.

The picture in docs/explore.md is this test's screenshot on the demo's runs:
    EXPLORE_RUNS=runs/demo/none-s1,runs/demo/additive-s1 \
    EXPLORE_SCREENSHOT=docs/images/explore.png \
    .venv/bin/python -m pytest tests/test_explore_browser.py
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Tunnel, tiny_runs

from seq2seq.lab.explore import Explorer
from seq2seq.lab.explore_http import server

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
SENTENCE = (
    "A farmer has told the mouse the story or these tired small sheep jump "
    "after the doctors have come back."
)
WAIT = 60  # seconds for an answer: tiny models decode in well under one
REBOUND = "rebound.test"  # a name "an attacker" points at 127.0.0.1

pytestmark = pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="no browser: install Debian's chromium and chromium-driver "
    "(apt-get install chromium chromium-driver, as .ci/run does) to run the "
    "explorer's page in a real browser",
)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Explorer]]:
    named = os.environ.get("EXPLORE_RUNS")
    if named:
        run_dirs = [Path(p) for p in named.split(",")]
    else:
        tiny = tiny_runs(tmp_path_factory.mktemp("browser"), test_pairs=20)
        run_dirs = [tiny["none"], tiny["additive"]]
    explorer = Explorer(run_dirs, "cpu")
    httpd = server(explorer, "127.0.0.1", 0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    host, port = httpd.server_address[:2]
    yield f"http://{host}:{port}", explorer
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def site(served: tuple[str, Explorer]) -> str:
    return served[0]


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    webdriver = pytest.importorskip("selenium.webdriver", reason="make install")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(flag)  # no display; root in a container
    options.add_argument("--window-size=1400,1400")
    # DNS rebinding without DNS: the attacker's name answers 127.0.0.1
    options.add_argument(f"--host-resolver-rules=MAP {REBOUND} 127.0.0.1")
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(DRIVER))
    yield driver
    driver.quit()


def api(url: str, path: str, body: dict) -> dict:
    request = urllib.request.Request(
        url + path,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=WAIT) as reply:
        return json.loads(reply.read())


def test_the_page_translates_and_shows_a_tokens_weights(site, browser) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, WAIT)
    browser.get(site + "/")
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".run .hypothesis")) == 2)
    box = browser.find_element(By.ID, "text")
    box.clear()
    box.send_keys(SENTENCE)
    browser.find_element(By.ID, "go").click()
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".run .hypothesis")) == 2)
    expected = api(site, "/api/translate", {"text": SENTENCE, "beam": 1})
    cards = browser.find_elements(By.CSS_SELECTOR, ".run")
    for card, run in zip(cards, expected["runs"], strict=True):
        assert card.get_attribute("data-run") == run["run"]
        shown = card.find_element(By.CSS_SELECTOR, ".hypothesis").text
        assert shown == run["hypothesis"].strip()
    none, additive = cards
    assert "no attention weights" in none.find_element(By.CSS_SELECTOR, ".note").text
    run = expected["runs"][1]
    row = min(1, len(run["tokens"]) - 1)
    token = additive.find_elements(By.CSS_SELECTOR, ".map .tok")[row]
    ActionChains(browser).move_to_element(token).perform()
    line = additive.find_element(By.CSS_SELECTOR, ".weights")
    wait.until(lambda d: line.get_attribute("data-row") == str(row))
    mark = additive.find_element(By.CSS_SELECTOR, ".row-mark")
    assert mark.get_attribute("visibility") == "visible"
    assert float(mark.get_attribute("y")) == 90 + 18 * row  # TOP + row * CELL
    # the first weight listed is the row's largest, as the API gave it
    top = max(run["weights"][row])
    assert line.text.startswith(f"{run['tokens'][row]} read: ")
    assert line.text.split(", ")[0].endswith(f"{top:.2f}")
    shot = os.environ.get("EXPLORE_SCREENSHOT")
    if shot:
        browser.save_screenshot(shot)


def test_a_test_line_growing_and_the_curve_in_the_page(site, browser) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, WAIT)
    browser.get(site + "/")
    wait.until(lambda d: d.find_element(By.ID, "line").get_attribute("max"))
    line = browser.find_element(By.ID, "line")
    line.clear()
    line.send_keys("3")
    browser.find_element(By.ID, "pick").click()
    wait.until(lambda d: "reference" in d.find_element(By.ID, "source").text)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, ".forced .aer"))
    answer = api(site, "/api/example", {"line": 3, "beam": 1})
    gold = browser.find_elements(By.CSS_SELECTOR, ".forced .gold")
    assert len(gold) == len(answer["runs"][1]["forced"]["gold"]) > 0
    assert "sentence BLEU" in browser.find_element(By.CSS_SELECTOR, ".score").text
    words = browser.find_element(By.ID, "words")
    words.clear()
    words.send_keys("20")
    browser.find_element(By.ID, "longer").click()
    wait.until(lambda d: "test lines" in d.find_element(By.ID, "source").text)
    assert words.get_attribute("value") == "25"
    grown = api(site, "/api/grow", {"words": 25, "variant": 0, "beam": 1})
    assert grown["source"] in browser.find_element(By.ID, "source").text
    browser.find_element(By.ID, "curve").click()
    wait.until(
        lambda d: len(d.find_elements(By.CSS_SELECTOR, "table.curve tr[data-run]")) == 2
    )
    assert browser.find_elements(By.CSS_SELECTOR, "svg.curve polyline")


def test_the_page_opens_on_its_example_translated_and_drawn(site, browser) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(site + "/")
    WebDriverWait(browser, WAIT).until(
        lambda d: len(d.find_elements(By.CSS_SELECTOR, ".run .hypothesis")) == 2
    )
    example = browser.find_element(By.ID, "text").get_attribute("value")
    expected = api(site, "/api/translate", {"text": example, "beam": 1})
    shown = browser.find_elements(By.CSS_SELECTOR, ".run .hypothesis")
    assert [e.text for e in shown] == [
        r["hypothesis"].strip() for r in expected["runs"]
    ]
    assert browser.find_elements(By.CSS_SELECTOR, ".run svg.heatmap")  # attention
    assert browser.find_element(By.ID, "error").text == ""


OTHER_PAGE = b"<!doctype html><title>another site</title><p>nothing here</p>"
ATTACKS = """
const [target, done] = arguments;
const body = JSON.stringify({text: "the dog sleeps ."});
const tries = {
  simple: () => fetch(target + "/api/translate", {method: "POST", body,
    headers: {"Content-Type": "text/plain"}}),
  blind: () => fetch(target + "/api/translate", {method: "POST", body, mode: "no-cors",
    headers: {"Content-Type": "text/plain"}}),
  json: () => fetch(target + "/api/translate", {method: "POST", body,
    headers: {"Content-Type": "application/json"}}),
  runs: () => fetch(target + "/api/runs"),
};
const out = {};
(async () => {
  for (const [name, go] of Object.entries(tries)) {
    try { const r = await go(); out[name] = `${r.type} ${r.status} ${await r.text()}`; }
    catch (e) { out[name] = "blocked"; }
  }
  done(out);
})();
"""


def test_another_origins_page_can_neither_use_nor_read_it(
    served, browser, monkeypatch
) -> None:
    """A page on another origin (another local port) fetches the explorer's
    API four ways, as an attacker's page would: nothing is translated and
    nothing is read."""
    site, explorer = served
    calls = []
    real = explorer.translate
    monkeypatch.setattr(explorer, "translate", lambda *a: calls.append(a) or real(*a))
    other = http.server.HTTPServer(("127.0.0.1", 0), OtherSite)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        browser.get(f"http://localhost:{other.server_address[1]}/")
        browser.set_script_timeout(WAIT)
        out = browser.execute_async_script(ATTACKS, site)
    finally:
        other.shutdown()
        other.server_close()
    assert calls == [], calls  # the server decoded nothing
    for name, seen in out.items():  # and the page read nothing
        assert seen == "blocked" or seen == "opaque 0 ", (name, seen)


class OtherSite(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(OTHER_PAGE)))
        self.end_headers()
        self.wfile.write(OTHER_PAGE)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


def test_a_rebound_name_is_refused(site, browser) -> None:
    """The page under the attacker's name (resolved to 127.0.0.1): the server
    answers 403 and one line, so a page there reads nothing."""
    from selenium.webdriver.common.by import By

    port = site.rsplit(":", 1)[1]
    browser.get(f"http://{REBOUND}:{port}/")
    text = browser.find_element(By.TAG_NAME, "body").text
    assert "not this server" in text and "seq2seq explore" not in browser.title
    browser.get(f"http://{REBOUND}:{port}/api/runs")
    assert "not this server" in browser.find_element(By.TAG_NAME, "body").text


def test_the_page_works_through_a_tunnel(site, browser) -> None:
    """`ssh -L` to another local port: the page loads and translates."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    tunnel = Tunnel(int(site.rsplit(":", 1)[1]))
    try:
        browser.get(f"http://localhost:{tunnel.port}/")
        WebDriverWait(browser, WAIT).until(
            lambda d: len(d.find_elements(By.CSS_SELECTOR, ".run .hypothesis")) == 2
        )
        browser.find_element(By.ID, "pick").click()
        WebDriverWait(browser, WAIT).until(
            lambda d: "reference" in d.find_element(By.ID, "source").text
        )
        assert browser.find_element(By.ID, "error").text == ""
    finally:
        tunnel.close()


def test_a_transformers_kind_layer_and_head_are_picked_in_the_page(
    tiny_transformer: Path, browser
) -> None:
    """A model with several maps gets the pickers: the last layer's cross-
    attention with its heads averaged first (the heatmap drawn above it),
    then the encoder's self-attention, square over the source, and one head
    of the first layer, each drawn from the weights the API returned."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.select import Select
    from selenium.webdriver.support.ui import WebDriverWait

    explorer = Explorer([tiny_transformer], "cpu")
    httpd = server(explorer, "127.0.0.1", 0)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    host, port = httpd.server_address[:2]
    site = f"http://{host}:{port}"
    try:
        browser.get(site + "/")
        wait = WebDriverWait(browser, WAIT)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, ".layers .grid rect"))
        example = browser.find_element(By.ID, "text").get_attribute("value")
        maps = api(site, "/api/translate", {"text": example, "beam": 1})["runs"][0]
        maps = maps["maps"]
        box = browser.find_element(By.CSS_SELECTOR, ".layers")
        cells = lambda: box.find_elements(By.CSS_SELECTOR, ".grid rect.cell")  # noqa: E731
        cross = maps["cross"]
        assert len(cells()) == len(cross["rows"]) * len(cross["cols"])
        assert (
            Select(
                box.find_element(By.CSS_SELECTOR, ".layer")
            ).first_selected_option.text
            == "layer 2"
        )
        Select(box.find_element(By.CSS_SELECTOR, ".kind")).select_by_visible_text(
            "encoder_self"
        )
        side = len(maps["encoder_self"]["rows"])
        wait.until(lambda d: len(cells()) == side * side)
        Select(box.find_element(By.CSS_SELECTOR, ".layer")).select_by_visible_text(
            "layer 1"
        )
        Select(box.find_element(By.CSS_SELECTOR, ".head")).select_by_visible_text(
            "head 2"
        )
        want = maps["encoder_self"]["weights"][0][1][0][0]  # layer 1, head 2, (0, 0)
        title = cells()[0].find_element(By.TAG_NAME, "title")
        wait.until(lambda d: title.get_attribute("textContent") == f"{want:.3f}")
        assert browser.find_element(By.ID, "error").text == ""
    finally:
        httpd.shutdown()
        httpd.server_close()
