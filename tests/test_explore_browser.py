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

import json
import os
import shutil
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import tiny_runs

from seq2seq.lab.explore import Explorer
from seq2seq.lab.explore_http import server

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
SENTENCE = (
    "A farmer has told the mouse the story or these tired small sheep jump "
    "after the doctors have come back."
)
WAIT = 60  # seconds for an answer: tiny models decode in well under one

pytestmark = pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="no browser: install Debian's chromium and chromium-driver "
    "(apt-get install chromium chromium-driver, as .ci/run does) to run the "
    "explorer's page in a real browser",
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    named = os.environ.get("EXPLORE_RUNS")
    if named:
        run_dirs = [Path(p) for p in named.split(",")]
    else:
        tiny = tiny_runs(tmp_path_factory.mktemp("browser"), test_pairs=20)
        run_dirs = [tiny["none"], tiny["additive"]]
    httpd = server(Explorer(run_dirs, "cpu"), "127.0.0.1", 0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    host, port = httpd.server_address[:2]
    yield f"http://{host}:{port}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    webdriver = pytest.importorskip("selenium.webdriver", reason="make install")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(flag)  # no display; root in a container
    options.add_argument("--window-size=1400,1400")
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(DRIVER))
    yield driver
    driver.quit()


def api(url: str, path: str, body: dict) -> dict:
    request = urllib.request.Request(
        url + path, data=json.dumps(body).encode(), method="POST"
    )
    with urllib.request.urlopen(request, timeout=WAIT) as reply:
        return json.loads(reply.read())


def test_the_page_translates_and_shows_a_tokens_weights(site, browser) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, WAIT)
    browser.get(site + "/")
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
