"""The pool search through the real path: the embedded SmolLM2-135M plays the poster task,
one small round, through ``langmarl train`` (config file, CLI, run files)."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.core.demos import DemoPolicy
from langmarl.store import LocalStore, PolicyCheckpoint
from langmarl.trainer.pool.records import PoolLog

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.slow
def test_one_round_on_the_embedded_model(tmp_path: Path) -> None:
    sets = {
        "runs_dir": str(tmp_path), "exp_name": "pool", "num_iterations": 1,
        "trajectories_per_iteration": 4, "validation_size": 2, "pool.children": 2,
        "pool.samples_per_task": 2,
    }  # fmt: skip
    args = ["train", str(REPO / "configs/poster_pool.json")]
    for key, value in sets.items():
        args += ["--set", f"{key}={value}"]
    done = CliRunner().invoke(build_app(), args)  # in process: the worker's loaded model
    assert done.exit_code == 0, done.output[-3000:]
    pool = PoolLog(LocalStore(tmp_path), "pool").all()
    assert pool[0].origin == "initial" and len(pool) >= 2
    assert all(c.score is not None and len(c.task_scores) == 2 for c in pool)
    children = pool[1:]
    assert all(DemoPolicy.parse(c.policies[a]).demos for c in children for a in c.changed)
    metrics = json.loads((tmp_path / "pool" / "metrics.json").read_text())
    assert metrics[0]["num_episodes"] == 4 and metrics[0]["credit"] == "counterfactual"
    best = max((c for c in pool if c.accepted), key=lambda c: c.score or 0.0)
    assert PolicyCheckpoint(LocalStore(tmp_path), "pool", 2).get_policies() == best.policies
