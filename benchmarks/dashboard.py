"""First paint of the dashboard's pages in a real headless Chromium.

Synthesises ``--runs`` runs with ``--rows`` metrics rows in total (as ``benchmarks/api.py``
does), serves them with a real uvicorn on loopback, and opens each page ``--repeat`` times in
a fresh browser tab (cold page, warm server), printing p50/p99 of:

* first contentful paint (the browser's ``first-contentful-paint`` entry: the header shows);
* the runs list rendered (``table.runs`` in the DOM, its 100 sparklines drawn);
* a run page rendered (its reward curve and every moving series drawn).

Times are the page's own clock (``performance.now()`` from navigation start).

Usage: python benchmarks/dashboard.py [--runs 1000] [--rows 100000] [--repeat 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from machine_load import print_machine  # beside this script
from playwright.sync_api import Browser, sync_playwright

sys.path.insert(0, str(Path(__file__).parent))
from api import serving, synthesise  # the same runs directory as the API benchmark

CHROMIUM = os.environ.get("LANGMARL_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync",
         "--disable-background-networking", "--disable-component-update"]  # fmt: skip
FCP = "performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null"


def summary(ms: list[float]) -> str:
    ordered = sorted(ms)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(ordered):7.1f} ms   p99 {p99:7.1f} ms   (n={len(ordered)})"


def measure(browser: Browser, url: str, ready: str) -> tuple[float, float]:
    """(first contentful paint, ``ready`` selector present) in ms, for a fresh tab."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        page.goto(url)
        page.wait_for_selector(ready, timeout=60_000)
        rendered = float(page.evaluate("performance.now()"))
        page.wait_for_function(f"({FCP}) !== null", timeout=60_000)
        return float(page.evaluate(FCP)), rendered
    finally:
        page.close()


def measure_pages(base: str, runs: int, rows: int, repeat: int) -> None:
    """Print the paint and render times of each page served at ``base``."""
    pages = {
        "runs list": (f"{base}/", "table.runs svg.sparkline path"),
        "run page": (f"{base}/#/run/group0~run0000", "figure.chart-main path.series"),
    }
    print(f"{runs} runs, {rows} metrics rows; Chromium headless, fresh tab each")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        measure(browser, *pages["runs list"])  # warms the server's run index
        for name, (url, ready) in pages.items():
            times = [measure(browser, url, ready) for _ in range(repeat)]
            print(f"{name:9}  first contentful paint {summary([t[0] for t in times])}")
            print(f"{name:9}  rendered               {summary([t[1] for t in times])}")
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "runs"
        synthesise(root, args.runs, args.rows)
        with serving(root) as base:
            measure_pages(base, args.runs, args.rows, args.repeat)


if __name__ == "__main__":
    print_machine()
    main()
