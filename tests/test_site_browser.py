"""A real browser (Debian Chromium driven by Playwright) opens the site from file://.

Checks: no console errors, no network requests (only file:// URLs), plots rendered
(plotly SVG present), the verdict filter and the regression filter work. Screenshots
are written to test-artifacts/site/ (gitignored). Chromium comes from Debian
(``.ci/install-browser``); without it this module is skipped with that reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_site_support import fixture_demo, mixed_run, trusted_keys_file

from generator.evidence.canonical import read_json
from generator.evidence.sign import KeyPair
from generator.site import build_site

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "site"
PLOT_TIMEOUT_MS = 20_000

import playwright.sync_api as playwright_api


@pytest.fixture(autouse=True)
def _chromium_present() -> None:
    # A missing browser is a failed setup, not a reason to skip: `make test` installs it.
    assert CHROMIUM.is_file(), "Debian chromium missing: run .ci/install-browser (as root)"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, trusted_pair: KeyPair) -> tuple[Path, Path]:
    """(evidence, site): the fixture demo plus a run with some regressions."""
    root = tmp_path_factory.mktemp("browser")
    evidence = root / "evidence"
    fixture_demo(evidence, trusted_pair.private_key)
    mixed_run(evidence / "runs" / "mixed", trusted_pair.private_key)
    build_site(evidence, root / "site", trusted_keys_file(root / "keys", trusted_pair.public_key))
    return evidence, root / "site"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright_api.sync_playwright() as pw:
        instance = pw.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_FLAGS)
        yield instance
        instance.close()


class Watched:
    """A page that records console errors, page errors and every requested URL."""

    def __init__(self, browser: object):
        self.page = browser.new_page(viewport={"width": 1400, "height": 1000})
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))

    def open(self, path: Path) -> object:
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_load_state("load")
        return self.page

    def assert_clean(self) -> None:
        assert self.errors == [], self.errors
        remote = [u for u in self.requests if not u.startswith("file://")]
        assert remote == [], f"network requests: {remote}"

    def shot(self, name: str) -> None:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def test_index_page_and_verdict_filter(site: tuple[Path, Path], browser: object) -> None:
    _, folder = site
    watched = Watched(browser)
    page = watched.open(folder / "index.html")
    rows = page.locator("#runs-table tbody tr")
    total = rows.count()
    assert total == 3
    page.select_option("#verdict-filter", "rejected")
    visible = page.locator("#runs-table tbody tr:not([hidden])")
    assert 0 < visible.count() < total
    assert set(visible.evaluate_all("rs => rs.map(r => r.dataset.verdict)")) == {"rejected"}
    page.select_option("#verdict-filter", "")
    assert page.locator("#runs-table tbody tr:not([hidden])").count() == total
    watched.shot("index.png")
    watched.assert_clean()
    watched.page.close()


def test_run_page_plots_and_regression_filter(site: tuple[Path, Path], browser: object) -> None:
    evidence, folder = site
    watched = Watched(browser)
    page = watched.open(folder / "runs" / "runs--mixed.html")
    page.wait_for_selector("#plot-cycle svg.main-svg", timeout=PLOT_TIMEOUT_MS)
    for plot in ("plot-cycle", "plot-tcp", "plot-clearance"):
        assert page.locator(f"#{plot} svg.main-svg").count() > 0, plot
        assert page.locator(f"#{plot} .trace").count() > 0, f"{plot}: no traces drawn"
    pairing = read_json(evidence / "runs" / "mixed" / "run.json")["pairing"]
    regressions = sorted(p["seed"] for p in pairing if p["change"] == "regression")
    page.click("button[data-seed-filter=regression]")
    shown = page.locator("#seed-table tbody tr:not([hidden])")
    assert sorted(int(i.removeprefix("seed-"))
                  for i in shown.evaluate_all("rs => rs.map(r => r.id)")) == regressions
    page.click("button[data-seed-filter=all]")
    assert page.locator("#seed-table tbody tr:not([hidden])").count() == len(pairing)
    page.click("#seed-table th[data-col=candidate-cycle]")
    watched.shot("run-mixed.png")
    watched.assert_clean()
    watched.page.close()


def test_demo_run_page_and_demo_page(site: tuple[Path, Path], browser: object) -> None:
    _, folder = site
    watched = Watched(browser)
    page = watched.open(folder / "runs" / "demo--iteration-2.html")
    page.wait_for_selector("#plot-cycle svg.main-svg", timeout=PLOT_TIMEOUT_MS)
    assert page.locator("#scope").is_visible()
    page.goto((folder / "runs" / "demo--iteration-2.html").resolve().as_uri() + "#seed-3")
    assert page.locator("#seed-3").is_visible()
    watched.shot("run-demo-iteration-2.png")
    watched.open(folder / "demos" / "demo.html")
    assert page.locator("li.iteration").count() == 2
    watched.shot("demo.png")
    watched.assert_clean()
    watched.page.close()
