"""benchmarks/reference_game.py without a model: its tiny plan's commands load against the
configs as the commands would, and its table and plot come out of result rows (a real run
takes minutes even when tiny, so this is what keeps the script from rotting)."""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(ROOT / "benchmarks"))  # the script imports machine_load beside it
    try:
        spec = importlib.util.spec_from_file_location(
            "reference_game_bench", ROOT / "benchmarks" / "reference_game.py"
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclasses look their module up
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
        sys.modules.pop("reference_game_bench", None)


def test_the_tiny_plan_checks_its_commands_against_the_configs(bench, tmp_path, capsys):
    assert bench.main(["--tiny", "--plan", "--out", str(tmp_path)]) == []
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "close seed 0 weights",
        "close seed 0 language",
        "close seed 0 language",
        "close seed 0 combined",
        "close seed 0 combined",
        "close seed 0 combined",
    ]
    assert "trainer.max_steps=1" in lines[0] and "num_iterations=1" in lines[1]
    assert lines[-2].endswith("combined-weights/checkpoints/final/agent-0")


def test_the_default_arms_share_one_budget(bench, tmp_path):
    args = bench.parse_args(["--out", str(tmp_path), "--budget-min", "2", "--step-seconds",
                             "4", "--round-seconds", "60"])  # fmt: skip
    assert (args.seeds, args.conditions) == ([0, 1, 2], ["far", "close"])
    arms = bench.plan(args)
    assert len(arms) == 2 * 3 * 3  # weights (and untrained), language, combined
    combined = arms[2]
    assert "trainer.max_steps=15" in " ".join(combined.commands[0])  # half of 30 steps
    assert "num_iterations=1" in " ".join(combined.commands[1])  # half of 2 rounds


def test_table_and_plot_from_rows(bench, tmp_path):
    def interval(mean):
        return {"mean": mean, "low": mean - 0.1, "high": mean + 0.1, "n": 30}

    rows = [
        {"arm": arm, "condition": condition, "seed": 0, "seconds": 60.0, "load": [1.0, 2.0],
         "before": interval(0.5), "after": interval(after)}
        for condition in ("far", "close")
        for arm, after in zip(bench.ARMS, (0.5, 0.6, 0.7, 0.8), strict=True)
    ]  # fmt: skip
    rows[0]["after"] = {"mean": 1.0, "low": 0.886, "high": 1.0 - 1e-12, "n": 30}  # Wilson at 30/30
    text = bench.table(rows)
    assert "close     combined     0  0.500 [0.400, 0.600]  0.800 [0.700, 0.900]   30" in text
    bench.plot(rows, tmp_path / "plot.png")
    assert (tmp_path / "plot.png").stat().st_size > 1000


def test_arms_run_at_once_keep_their_order_and_bad_jobs_are_refused(bench, tmp_path, monkeypatch):
    import threading
    import time

    running, most = [0], [0]
    lock = threading.Lock()

    def run_arm(arm, logs):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.2)
        with lock:
            running[0] -= 1
        return 0.2, 1.0, 1.0

    monkeypatch.setattr(bench, "run_arm", run_arm)
    monkeypatch.setattr(bench, "results", lambda arm: ([0.0, 1.0], [1.0, 1.0]))
    rows = bench.main(["--jobs", "2", "--seeds", "0", "1", "--conditions", "close",
                       "--out", str(tmp_path)])  # fmt: skip
    assert most[0] == 2
    assert [(r["seed"], r["arm"]) for r in rows] == [
        (seed, arm) for seed in (0, 1) for arm in ("untrained", "weights", "language", "combined")
    ]
    with pytest.raises(SystemExit):
        bench.parse_args(["--jobs", "0"])
