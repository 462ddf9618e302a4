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
import threading
import time
from pathlib import Path

import uvicorn
from playwright.sync_api import Browser, sync_playwright

from langmarl.llm.server.config import bind_socket
from langmarl.web import create_app

sys.path.insert(0, str(Path(__file__).parent))
from api import synthesise  # the same runs directory as the API benchmark

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "runs"
        synthesise(root, args.runs, args.rows)
        sock = bind_socket("127.0.0.1", 0)
        server = uvicorn.Server(uvicorn.Config(create_app(root), log_level="warning"))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        base = f"http://127.0.0.1:{sock.getsockname()[1]}"
        pages = {
            "runs list": (f"{base}/", "table.runs svg.sparkline path"),
            "run page": (f"{base}/#/run/group0~run0000", "figure.chart-main path.series"),
        }
        print(f"{args.runs} runs, {args.rows} metrics rows; Chromium headless, fresh tab each")
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
                measure(browser, *pages["runs list"])  # warms the server's run index
                for name, (url, ready) in pages.items():
                    times = [measure(browser, url, ready) for _ in range(args.repeat)]
                    print(f"{name:9}  first contentful paint {summary([t[0] for t in times])}")
                    print(f"{name:9}  rendered               {summary([t[1] for t in times])}")
                browser.close()
        finally:
            server.should_exit = True
            thread.join(timeout=10)


if __name__ == "__main__":
    main()
