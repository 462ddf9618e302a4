"""The dashboard end to end in a real headless Chromium (Debian's ``chromium``, driven by
Playwright): a language run trained by the embedded SmolLM2 through ``langmarl train``, served
by ``langmarl dashboard``; the test opens the runs list, clicks into the run, sees its reward
curve and a policy diff, starts a tiny job from the jobs page and stops it (its run ends
``cancelled``), and compares two runs. Screenshots go to the test's directory, and to
``docs/dashboard/`` when ``LANGMARL_SAVE_SCREENSHOTS=1`` (how the README's are made)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright
from typer.testing import CliRunner
from web_fixtures import REPLIES

from langmarl.cli import build_app
from langmarl.testing.openai_stub import OpenAIStub
from langmarl.testing.roles import role_responder

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("LANGMARL_CHROMIUM", "/usr/bin/chromium")
# What a headless Chromium needs on a closed network (no background calls home).
CHROMIUM_FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync",
    "--disable-background-networking", "--disable-component-update",
]  # fmt: skip
TIMEOUT_MS = 60_000


def tiny_language_config(**changes: object) -> dict[str, object]:
    """The quickstart language config, cut to seconds on the embedded model; every update
    kept (no validation), so the policies change and there is a diff to see."""
    config = json.loads((ROOT / "configs" / "quickstart.json").read_text())
    config.update(num_iterations=2, trajectories_per_iteration=1, validate_updates=False)
    # 8-token critic and optimizer replies: the policies still change (measured: both, every
    # time), for 1.1 CPU-s less than 16
    config["llm"] = {"preset": "local", "max_tokens": 8}
    config["actor_llm"] = {"preset": "local", "max_tokens": 8}
    config.update(changes)
    return config


def langmarl(*args: str) -> list[str]:
    return [sys.executable, "-m", "langmarl.cli", *args]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """(URL, runs dir) of a dashboard over a runs dir holding one real embedded-model run."""
    base = tmp_path_factory.mktemp("dashboard")
    runs = base / "runs"
    config = base / "tiny.json"
    config.write_text(json.dumps(tiny_language_config(
        exp_name="tiny-qa", runs_dir=str(runs), checkpoint_dir=str(base / "ckpt"),
    )))  # fmt: skip
    # in process: the run is trained by the process's embedded engine, which the embedded
    # model's other tests share (a subprocess loaded the model for this run alone: 5 CPU-s)
    trained = CliRunner().invoke(build_app(), ["train", str(config)])
    assert trained.exit_code == 0, trained.output[-2000:]
    server = subprocess.Popen(
        langmarl("dashboard", "--runs-dir", str(runs), "--port", "0"),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+", line)
        assert match, f"the dashboard did not announce its address: {line!r}"
        yield match.group(0), runs
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Headless Chromium, started once for the module's tests."""
    assert Path(CHROMIUM).is_file(), (
        f"no Chromium at {CHROMIUM}: install Debian's chromium package (python3 dev.py setup "
        "does, as root) or point LANGMARL_CHROMIUM at one"
    )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


@pytest.fixture
def browser_page(browser: Browser) -> Iterator[tuple[Page, list[str]]]:
    """A fresh page in a fresh context (no cookies, storage or routes of another test's),
    and the script errors it raises."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page, errors
    context.close()


def screenshot(page: Page, name: str, folder: Path) -> None:
    page.screenshot(path=str(folder / name), full_page=True)
    if os.environ.get("LANGMARL_SAVE_SCREENSHOTS") == "1":
        page.screenshot(path=str(ROOT / "docs" / "dashboard" / name), full_page=True)


def wait_for_run(url: str, run_id: str) -> dict[str, object]:
    """The run's listing once ``run.json`` exists (the job's process has started training)."""
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        runs = httpx.get(f"{url}/api/runs", timeout=10).json()["runs"]
        found = [r for r in runs if r["run_id"] == run_id]
        if found and found[0]["steps"] >= 1:
            return found[0]
        time.sleep(0.5)
    raise AssertionError(f"run {run_id} never wrote a metrics line")


def test_the_dashboard_in_a_real_browser(
    served: tuple[str, Path], browser_page: tuple[Page, list[str]], tmp_path: Path
) -> None:
    url, runs = served
    page, errors = browser_page
    # the runs list: the embedded-model run, completed, with its sparkline
    page.goto(f"{url}/")
    row = page.locator("tr[data-run='tiny-qa']")
    expect(row).to_contain_text("completed")
    expect(row.locator("svg.sparkline path")).to_have_count(1)
    screenshot(page, "runs.png", tmp_path)

    # click into the run: its reward curve (two iterations) and a policy diff
    row.locator("a.run-link").click()
    curve = page.locator("figure.chart-main path.series")
    expect(curve).to_have_count(1)
    assert " L" in (curve.get_attribute("d") or ""), "the reward curve has one point only"
    added = page.locator("#policy-evolution .diff-add")
    expect(added.first).to_be_visible()
    policies = httpx.get(f"{url}/api/runs/tiny-qa/policies?iteration=2", timeout=10).json()
    newest = next(iter(policies["checkpoints"][0]["policies"].values()))
    # expect retries: the section may be re-rendered (briefly "Loading…") as the stream opens
    expect(page.locator("#policy-evolution")).to_contain_text(newest.splitlines()[-1].strip())
    expect(page.locator("#trajectories .episode").first).to_be_visible()
    screenshot(page, "run.png", tmp_path)

    # start a tiny job from the jobs page, see it run, stop it: its run ends cancelled. Its LLM
    # is a stub server (the run above is the embedded model's): the job's process does not
    # load the model for one iteration (9 CPU-s), and its latency keeps the job running.
    page.goto(f"{url}/#/jobs")
    expect(page.locator("#resources")).to_contain_text(re.compile(r"load [\d.]+ / .* cores"))
    with OpenAIStub(latency=0.2, responder=role_responder(REPLIES)) as stub:
        job_config = tiny_language_config(exp_name="job", num_iterations=40)
        job_config["llm"] = job_config["actor_llm"] = stub.llm_config()
        page.fill("textarea[name=config]", json.dumps(job_config, indent=1))
        page.fill("textarea[name=overrides]", "trajectories_per_iteration=1")
        page.click("form.job-form button[type=submit]")
        job_row = page.locator("tr[data-job]").first
        expect(job_row).to_have_attribute("data-state", "running")
        job_id = job_row.get_attribute("data-job") or ""
        wait_for_run(url, job_id)
        job_row.locator("button", has_text="cancel").click()
        cancelled = page.locator(f"tr[data-job='{job_id}']")
        expect(cancelled).to_have_attribute("data-state", "cancelled")
        assert stub.hits, "the job never asked its LLM"
    screenshot(page, "jobs.png", tmp_path)
    record = json.loads((runs / job_id / "run.json").read_text())
    assert record["status"] == "cancelled", record

    # compare the two runs: the reward first, a curve per run (tests/web/test_compare_browser.py
    # covers the metrics picked, the smoothing and the config diff)
    page.goto(f"{url}/")
    for run_id in ("tiny-qa", job_id):
        page.locator(f"tr[data-run='{run_id}'] input[type=checkbox]").check()
    page.click("#compare-selected")
    expect(page.locator("figure.compare-chart").first.locator("path.series")).to_have_count(2)
    screenshot(page, "compare.png", tmp_path)
    assert not errors, errors


@contextlib.contextmanager
def kinds_registered(*names: str) -> Iterator[None]:
    """Unregister the kinds ``names`` when the block ends."""
    from langmarl.store import kinds

    try:
        yield
    finally:
        for name in names:
            kinds.unregister(name)


def test_the_weight_and_reward_space_pages_render(
    browser_page: tuple[Page, list[str]], tmp_path: Path
) -> None:
    """A MAGRPO run, a PARL GRPO run and a Prompt2Policy session (the API tests' runs):
    each run page shows its space's own sections, without a script error; a kind registered
    only in this process is offered by the runs list's filter and drawn from its metrics."""
    from web_fixtures import grpo_run, magrpo_run, session_run

    from langmarl.store import kinds
    from langmarl.store.run import RunDir
    from langmarl.testing.asgi import live_server
    from langmarl.web import create_app

    root = tmp_path / "runs"
    magrpo_run(root / "mag"), grpo_run(root / "grpo"), session_run(root / "session")
    session_run(root / "bench" / "case")  # a benchmark table over one session
    case = {"env_id": "InvertedPendulum-v5", "instruction": "balance"}
    table = {"cases": [{"case": case, "session_id": "case", "status": "passed", "best_score": 0.9}],
             "summary": {"all": {"cases": 1, "success_rate": 1.0, "mean_score": 0.9}},
             "complete": True}  # fmt: skip
    (root / "bench" / "bench.json").write_text(json.dumps(table))
    (root / "bench_new").mkdir()  # no case run yet, no summary (issue 42, item 3)
    (root / "bench_new" / "bench.json").write_text(json.dumps({"cases": [], "complete": False}))
    kinds.register(kinds.RunKindSpec("toy_page", "a toy trainer", score_key="score"))
    toy = RunDir(root / "toy")
    toy.start("toy_page")
    toy.log_metrics(1, score=0.2), toy.log_metrics(2, score=0.6), toy.finish("completed")
    page, errors = browser_page
    with kinds_registered("toy_page"), live_server(create_app(root)) as url:
        page.goto(f"{url}/")
        expect(page.locator("select[aria-label='kind'] option[value='toy_page']")).to_have_count(1)
        page.goto(f"{url}/#/run/toy")
        expect(page.locator("figure.chart-main path.series")).to_have_count(1)
        expect(page.locator("section.card h2", has_text="Config")).to_be_visible()
        expect(page.locator("#heldout")).to_have_count(0)  # no view of another kind
        page.goto(f"{url}/#/run/session")
        iteration = page.locator("#iterations .iteration[data-iteration='iter_1']")
        expect(iteration.locator("pre.code")).to_contain_text("def reward_fn")
        expect(iteration).to_contain_text("intent score 0.9 (passed)")
        kept = iteration.locator(".candidates tr[data-candidate='c_1']")
        expect(kept).to_contain_text("✓")  # the search's candidates, the kept one marked
        expect(kept).to_contain_text("structured")
        expect(iteration.locator(".candidates tr[data-candidate='c_2']")).to_contain_text("0.4")
        expect(iteration.locator("video")).to_have_count(1)  # fetched with the token path
        expect(page.locator("#analysis")).to_contain_text("not analysed yet")
        page.locator("#analysis button.analyze").click()  # POST .../analyze, streamed
        expect(page.locator("#analysis .analysis")).to_contain_text("Iteration 1 was best")
        expect(page.locator("#analysis .toolbar")).to_contain_text("analysed")
        page.goto(f"{url}/#/run/mag")
        expect(page.locator("#heldout")).to_be_visible()
        expect(page.locator("figure.chart-main path.series")).to_have_count(1)
        page.goto(f"{url}/#/run/grpo")
        expect(page.locator("section.card h2", has_text="PARL curves")).to_be_visible()
        page.goto(f"{url}/#/benchmarks")  # the list, one benchmark, then its case's session
        page.locator("tr[data-bench='bench'] a").click()
        expect(page.locator("table.cases tr[data-case='1']")).to_contain_text("passed")
        page.locator("table.cases a.session-link").click()
        expect(page.locator("#iterations .timeline-item").first).to_be_visible()
        page.goto(f"{url}/#/benchmark/bench_new")
        expect(page.locator("h2", has_text="Cases")).to_be_visible()
        text = page.locator("main").inner_text()
        assert "no case run yet" in text and "null" not in text and "/?" not in text
    assert not errors, errors


def test_the_api_docs_render_with_the_network_blocked(
    browser_page: tuple[Page, list[str]], tmp_path: Path
) -> None:
    """``/docs`` loads Swagger UI from the server itself: with every request to another host
    refused, the page still renders the API's title and its routes."""
    from langmarl.testing.asgi import live_server
    from langmarl.web import create_app

    page, errors = browser_page
    refused: list[str] = []

    def only_this_server(route: Any) -> None:
        if route.request.url.startswith(url):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    with live_server(create_app(tmp_path)) as url:
        page.route("**/*", only_this_server)
        page.goto(f"{url}/docs")
        expect(page.locator(".swagger-ui .info .title")).to_contain_text("langmarl dashboard API")
        expect(page.locator(".opblock-summary-path", has_text="/api/kinds")).to_have_count(1)
    assert not errors, errors
    assert not refused, f"the docs page asked another host: {refused}"


def _running(built: Path, served: Path) -> None:
    """``built``'s ``run.json`` into ``served`` as ``running``, owned by this process."""
    from langmarl.core.files import atomic_write_text
    from langmarl.core.processes import process_start

    info = json.loads((built / "run.json").read_text())
    pid = os.getpid()
    info.update(status="running", error=None, pid=pid, pid_started=process_start(pid))
    atomic_write_text(served / "run.json", json.dumps(info))


def _stage_run(built: Path, served: Path, started: bool) -> None:
    """A run that has written nothing yet: its ``run.json`` saying it runs, or, not
    ``started``, only the run file a MAGRPO command writes before its models load (the run
    is listed, status ``unknown``)."""
    served.mkdir(parents=True)
    if started:
        _running(built, served)
    else:
        (served / "run_config.json").write_text('{"algorithm": "magrpo"}')


def _write_files(built: Path, served: Path) -> None:
    """Every file of the run but its final ``run.json``, which says it still runs."""
    import shutil

    for path in sorted(built.rglob("*")):
        target = served / path.relative_to(built)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        elif path.name != "run.json":
            shutil.copy2(path, target)
    _running(built, served)


def test_a_run_page_opened_before_the_first_metric_fills_in_live(
    browser_page: tuple[Page, list[str]], tmp_path: Path
) -> None:
    """For a language, a MAGRPO and a Prompt2Policy run, a page opened before the run's first
    metric (the MAGRPO one before its ``run.json``) fills in every section while the run
    still runs, without a reload: header, curves, the kind's own sections, config and
    events; then it shows the final status."""
    import shutil

    from web_fixtures import language_run, magrpo_run, session_run

    from langmarl.testing.asgi import live_server
    from langmarl.web import create_app

    built = tmp_path / "built"
    language_run(built), magrpo_run(built / "mag"), session_run(built / "session")
    own = {
        "lang": ("#policy-evolution .agent-policy", "#trajectories .episode"),
        "mag": ("#heldout table.heldout", "section.card:has(h2:text('Checkpoints')) table"),
        "session": ("#iterations .timeline-item", "#iterations pre.code"),
    }
    served = tmp_path / "runs"
    page, errors = browser_page
    with live_server(create_app(served, poll_interval=0.1)) as url:
        for name, selectors in own.items():
            _stage_run(built / name, served / name, started=name != "mag")
            page.goto(f"{url}/#/run/{name}")
            expect(page.locator(".charts")).to_contain_text("no metrics yet")
            expect(page.locator(".run-header")).to_contain_text("0 metric lines")
            _write_files(built / name, served / name)
            expect(page.locator("#live")).to_be_visible()
            expect(page.locator(".run-header .status")).to_have_text("running")
            expect(page.locator("figure.chart-main path.series")).to_have_count(1)
            for selector in selectors:
                expect(page.locator(selector).first).to_be_visible()
            expect(page.locator("ol.events li").first).to_be_visible()
            expect(page.locator("pre.config")).not_to_have_text("{}")
            expect(page.locator(".run-header")).not_to_contain_text("0 metric lines")
            shutil.copy2(built / name / "run.json", served / name / "run.json")
            expect(page.locator(".run-header .status")).to_have_text("completed")
            expect(page.locator("#live")).to_be_hidden()
    assert not errors, errors


def test_a_pool_run_page_follows_the_search_live(
    browser_page: tuple[Page, list[str]], tmp_path: Path
) -> None:
    """A pool-search run (issue 42, item 2), grown file by file as its trainer writes them:
    the page shows the current phase in its header, "no trajectories yet" (not an error),
    then the pool as it grows (the front, every candidate with its score and parents, the
    demonstrations of the best candidate), no curve of candidate ids, events numbered from
    1, and not one console error (no request for gradients a pool run does not have)."""
    from web_fixtures import line_of, pool_run, stage_running

    from langmarl.testing.asgi import live_server
    from langmarl.web import create_app

    built = pool_run(tmp_path / "built")
    events, pool, metrics = "logs/events.jsonl", "pool.jsonl", "metrics.jsonl"
    first_round = sum(json.loads(line)["iteration"] == 0 for line in (built / pool).open())
    served = tmp_path / "runs" / "pool"
    page, errors = browser_page
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
    phase = page.locator(".run-header .phase")
    with live_server(create_app(tmp_path / "runs", poll_interval=0.1)) as url:
        start = {events: line_of(built / events, "run_start"), pool: 0, metrics: 0}
        stage_running(built, served, start, trajectories=False)
        page.goto(f"{url}/#/run/pool")
        expect(phase).to_contain_text("iteration 1 · scoring the starting policies")
        expect(page.locator("#trajectories")).to_contain_text("no trajectories yet")
        expect(page.locator("#pool")).to_contain_text("no candidates yet")

        generating = {events: line_of(built / events, "episode", 3), pool: 1, metrics: 0}
        stage_running(built, served, generating, trajectories=False)
        expect(phase).to_contain_text("iteration 1 · generating episodes (3/8)")
        expect(page.locator("#pool tr[data-candidate='0']")).to_contain_text("★ best")

        round_one = {events: line_of(built / events, "iteration_end"), pool: first_round,
                     metrics: 1}  # fmt: skip
        stage_running(built, served, round_one)
        expect(phase).to_contain_text("iteration 2 · starting")
        child = page.locator("#pool tr[data-candidate='1']")
        expect(child.locator("td.parents")).to_have_text("#0")
        expect(child.locator("td.score")).not_to_have_text("—")
        expect(page.locator("#pool table.pool tbody tr")).to_have_count(first_round)
        expect(page.locator("#trajectories .episode").first).to_be_visible()

        stage_running(built, served, {})  # every line: the second round is in
        answer = httpx.get(f"{url}/api/runs/pool/pool", timeout=10).json()
        expect(page.locator("#pool table.pool tbody tr")).to_have_count(len(answer["candidates"]))
        front = ", ".join(f"#{i}" for i in answer["front"])
        expect(page.locator("#pool p.front")).to_contain_text(f"Pareto front: {front}")
        best = page.locator(f"#pool tr[data-candidate='{answer['best']}']")
        expect(best).to_contain_text("★ best")
        demo = answer["demonstrations"]["key_word"]["demonstrations"][0]
        shown = page.locator("#pool .agent-demos[data-agent='key_word'] .demo-output").first
        expect(shown).to_contain_text(demo["output"])
        expect(page.locator("figure.chart-main path.series")).to_have_count(1)
        expect(page.locator("ol.events")).to_contain_text("iteration_start · iteration=1")
        expect(page.locator("figure[data-key='pool_size']")).to_have_count(1)  # drawn by now
        ids = page.locator("figure[data-key='parent'], figure[data-key='best_candidate']")
        assert ids.count() == 0  # candidate ids are no curves
        assert "iteration=0" not in page.locator("ol.events").inner_text()
        screenshot(page, "pool.png", tmp_path)

        (served / "run.json").write_text((built / "run.json").read_text())
        expect(page.locator(".run-header .status")).to_have_text("completed")
        expect(phase).to_have_count(0)
    assert not errors, errors
    assert not console, console
