"""``GET /api/resources/history`` (issue 42, item 7): the server samples CPU, memory and load
every few seconds from its start into a bounded ring, served oldest first over a live
server behind the token; the ring drops the oldest samples."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from langmarl.testing.asgi import live_server
from langmarl.testing.processes import wait_until
from langmarl.web import create_app
from langmarl.web.routes.monitor import INTERVAL_S, ResourceSampler

TOKEN = "monitor-token-1234"


def test_the_ring_keeps_the_newest_samples(tmp_path: Path) -> None:
    sampler = ResourceSampler(tmp_path, capacity=3)
    taken = [sampler.sample() for _ in range(5)]
    assert list(sampler.samples) == taken[2:]
    assert taken[0]["cpu_pct"] is None  # no earlier reading to compare with
    for sample in taken[1:]:
        assert sample["cpu_pct"] is None or 0.0 <= sample["cpu_pct"] <= 100.0
    assert 0 < taken[-1]["memory_used"] < taken[-1]["memory_total"]
    assert taken[-1]["load_1"] >= 0 and taken[-1]["cpus_usable"] >= 1


def test_the_server_samples_while_it_runs(tmp_path: Path) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with live_server(create_app(tmp_path / "runs", token=TOKEN)) as url:
        route = f"{url}/api/resources/history"
        assert httpx.get(route, timeout=30).status_code == 401

        def samples() -> list[dict]:
            return httpx.get(route, headers=auth, timeout=30).json()["samples"]

        wait_until(lambda: len(samples()) >= 2, timeout_s=30, what="two samples")
        answer = httpx.get(route, headers=auth, timeout=30).json()
        assert (answer["interval_s"], answer["capacity"]) == (INTERVAL_S, 900)
        times = [s["time"] for s in answer["samples"]]
        assert times == sorted(times) and times[-1] <= time.time()
        assert times[1] - times[0] >= INTERVAL_S * 0.9
        newest = answer["samples"][-1]
        assert newest["cpu_pct"] is not None and newest["memory_total"] > 0
        later = httpx.get(route, params={"since": times[-1]}, headers=auth, timeout=30).json()
        assert all(s["time"] > times[-1] for s in later["samples"])
        paths = httpx.get(f"{url}/openapi.json", timeout=30).json()["paths"]
        assert "get" in paths["/api/resources/history"]


@pytest.mark.slow
def test_the_monitor_view_draws_the_history_in_a_real_browser(tmp_path: Path) -> None:
    """The header's Monitor link opens the view (langmarl/web/pages/static/views/monitor.js)
    on a live dashboard: CPU, memory and load charts with lines, no script error."""
    from playwright.sync_api import expect, sync_playwright
    from test_dashboard_browser import CHROMIUM, CHROMIUM_FLAGS

    with live_server(create_app(tmp_path / "runs")) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{url}/")
        page.click("a[data-nav=monitor]")
        expect(page.locator("a[data-nav=monitor]")).to_have_class("active")
        charts = page.locator("#monitor-charts svg.chart")
        expect(charts).to_have_count(3, timeout=30_000)
        for title in ("CPU use", "memory used", "1-minute load"):
            expect(page.locator("#monitor-charts")).to_contain_text(title)
        expect(page.locator("#monitor-charts svg.chart path.series")).to_have_count(3)
        browser.close()
    assert errors == []
