"""Latency of the dashboard's API over a large runs directory.

Synthesises ``--runs`` runs (default 1,000; kinds mixed: magrpo, iac, maac, parl_grpo,
p2p) holding ``--rows`` metrics rows in total (default 100,000), serves them with a
real uvicorn on a free loopback port, and times over HTTP:

* ``GET /api/runs`` (first page of 100, every run summarised): the first request (summaries
  cached afterwards) and then p50/p99 of ``--repeat`` requests;
* ``GET /api/runs/{id}/metrics`` of a random run each time: p50/p99 of ``--repeat`` requests;
* ``GET /api/runs?sort=-score&kind=magrpo`` (filter and sort over every run): p50/p99.

Usage: python benchmarks/api.py [--runs 1000] [--rows 100000] [--repeat 200]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from machine_load import print_machine  # beside this script

from langmarl.store import kinds
from langmarl.testing.asgi import live_server
from langmarl.web import create_app

KINDS = ("magrpo", "iac", "maac", "parl_grpo", "p2p")


def synthesise(root: Path, runs: int, rows: int) -> None:
    """``runs`` finished runs under ``root`` with ``rows`` metrics lines in total (written in
    one go per file: the run contract's fsync per line would dominate the set-up)."""
    rng = random.Random(0)
    per_run = max(1, rows // runs)
    for index in range(runs):
        kind = KINDS[index % len(KINDS)]
        run = root / f"group{index % 10}" / f"run{index:04d}"
        (run / "logs").mkdir(parents=True)
        record = {
            "schema_version": 1, "run_id": run.name, "kind": kind, "status": "completed",
            "config": {"seed": index}, "created_at": 1e9 + index, "updated_at": 1e9 + index,
            "total_steps": per_run, "iterations": per_run, "best_score": rng.random(),
        }  # fmt: skip
        (run / "run.json").write_text(json.dumps(record))
        key = kinds.get(kind).score_key
        lines = (
            json.dumps({"step": step, key: rng.random(), "loss": rng.random()})
            for step in range(1, per_run + 1)
        )
        (run / "metrics.jsonl").write_text("\n".join(lines) + "\n")
        (run / "logs" / "events.jsonl").write_text('{"time": 0, "event": "run_start"}\n')


def serving(root: Path) -> contextlib.AbstractContextManager[str]:
    """The dashboard over ``root`` in a real uvicorn on a free loopback port; yields its URL."""
    return live_server(create_app(root))


def percentiles(seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    p99 = ms[min(len(ms) - 1, round(0.99 * (len(ms) - 1)))]
    return f"p50 {statistics.median(ms):7.1f} ms   p99 {p99:7.1f} ms   (n={len(ms)})"


def timed(client: httpx.Client, url: str) -> float:
    start = time.perf_counter()
    response = client.get(url)
    elapsed = time.perf_counter() - start
    response.raise_for_status()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "runs"
        start = time.perf_counter()
        synthesise(root, args.runs, args.rows)
        print(f"synthesised {args.runs} runs / {args.rows} metrics rows in "
              f"{time.perf_counter() - start:.1f} s")  # fmt: skip
        with serving(root) as base, httpx.Client(base_url=base, timeout=120) as client:
            cold = timed(client, "/api/runs")
            total = client.get("/api/runs?limit=1").json()["total"]
            print(f"GET /api/runs, first request (cache cold, {total} runs): "
                  f"{cold * 1000:.0f} ms")  # fmt: skip
            listed = [timed(client, "/api/runs") for _ in range(args.repeat)]
            print(f"GET /api/runs (page of 100, cached):          {percentiles(listed)}")
            ids = [r["run_id"] for r in client.get("/api/runs?limit=1000").json()["runs"]]
            rng = random.Random(1)
            series = [
                timed(client, f"/api/runs/{rng.choice(ids)}/metrics") for _ in range(args.repeat)
            ]
            print(f"GET /api/runs/{{id}}/metrics (random run):    {percentiles(series)}")
            query = "/api/runs?kind=magrpo&sort=-score"
            filtered = [timed(client, query) for _ in range(args.repeat)]
            print(f"GET {query}:  {percentiles(filtered)}")


if __name__ == "__main__":
    print_machine()
    main()
