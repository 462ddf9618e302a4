"""`PoolTrainer` end to end with a scripted poster model: demonstrations that raise the
validation score are kept, those that lower it refused; every decision is in the run."""

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from langmarl.core.demos import DemoPolicy
from langmarl.store import LocalStore, PolicyCheckpoint
from langmarl.trainer.pool.candidates import Candidate
from langmarl.trainer.pool.records import PoolLog

sys.path.insert(0, str(Path(__file__).parent))
from pool_target import make_trainer

TARGET = Path(__file__).with_name("pool_target.py")


def pool_of(runs: Path, run_id: str) -> list[Candidate]:
    return PoolLog(LocalStore(runs), run_id).all()


def test_demonstrations_are_kept_when_they_help_and_refused_when_they_hurt(
    tmp_path: Path,
) -> None:
    trainer = make_trainer(tmp_path, "run", rounds=3, latency=0.0, children=6)
    metrics = trainer.train()
    pool = pool_of(tmp_path, "run")
    by_id = {c.id: c for c in pool}
    initial = by_id[0]
    assert initial.origin == "initial" and initial.score is not None and initial.score < 0.5
    children = [c for c in pool if c.origin != "initial"]
    for child in children:  # the gate: accepted exactly when not below the first parent
        parent = by_id[child.parents[0]]
        assert child.accepted == (child.score is not None and child.score >= parent.score)
    helped = [c for c in children if c.accepted and c.score > initial.score]
    hurt = [c for c in children if not c.accepted]
    assert helped and hurt
    assert any("calls you home" in c.policies["tagline"] for c in helped)
    assert all("keep going on" in c.policies["tagline"] for c in hurt if "tagline" in c.changed)
    best = max((c for c in pool if c.accepted), key=lambda c: c.score)
    checkpoint = PolicyCheckpoint(LocalStore(tmp_path), "run", 2)
    assert checkpoint.get_policies() == best.policies
    assert metrics[-1]["validation_score"] == best.score == 1.0
    decisions = LocalStore(tmp_path).load_update_decisions("run")
    assert {d["kind"] for d in decisions} <= {"demonstration", "merge"}
    assert sum(d["accepted"] for d in decisions) >= len(helped)
    demos = DemoPolicy.parse(best.policies["key_word"]).demos
    assert demos and all(len(d.output.split()) == 1 for d in demos)


def test_exploration_never_uses_the_validation_tasks(tmp_path: Path) -> None:
    trainer = make_trainer(tmp_path, "run", rounds=2, latency=0.0)
    trainer.train()
    held = {t["id"] for t in trainer.validator.tasks}
    for path in (tmp_path / "run" / "trajectories").rglob("*.json"):
        assert json.loads(path.read_text())["task"]["id"] not in held


def test_a_round_that_finds_nothing_keeps_the_starting_policies(tmp_path: Path) -> None:
    trainer = make_trainer(tmp_path, "run", rounds=1, latency=0.0)
    trainer.config.pool.explore_temperature = 0.0  # exploration is greedy too
    trainer.config.pool.children = 1
    trainer.train()
    pool = pool_of(tmp_path, "run")
    checkpoint = PolicyCheckpoint(LocalStore(tmp_path), "run", 2)
    assert len(pool) >= 2 and all(c.score == pool[0].score for c in pool if c.accepted)
    assert checkpoint.get_policies() == pool[0].policies  # ties go to the oldest


@pytest.mark.slow
def test_decisions_survive_sigkill_and_resume(tmp_path: Path) -> None:
    rounds, rng = 6, random.Random(5)  # ~3 waves of 0.4 s calls per round: ~8 s in all
    reference = tmp_path / "reference"
    make_trainer(reference, "run", rounds, latency=0.0).train()
    killed = tmp_path / "killed"
    command = [sys.executable, str(TARGET), str(killed), "run", str(rounds), "0.4"]
    kills = 0
    while kills < 5:
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(1.2, 3.0))
        if proc.poll() is not None:
            break
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
    final = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert final.returncode == 0, final.stderr[-2000:]
    assert kills >= 2
    assert sum(m["reused_episodes"] for m in LocalStore(killed).load_metrics("run")) > 0
    expected = [c.model_dump() for c in pool_of(reference, "run")]
    assert [c.model_dump() for c in pool_of(killed, "run")] == expected
    info = LocalStore(killed).run_info("run")
    assert info["status"] == "completed" and info["completed_iterations"] == rounds


def test_a_corrupt_pool_file_is_named_with_the_fix(tmp_path: Path) -> None:
    make_trainer(tmp_path, "run", rounds=1, latency=0.0).train()
    path = tmp_path / "run" / "pool.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], '{"id": "not a number"}', *lines[1:]]) + "\n")
    from langmarl.core.errors import RunFileError

    with pytest.raises(RunFileError, match=r"pool\.jsonl: line 2 is not a pool candidate"):
        make_trainer(tmp_path, "run", rounds=2, latency=0.0).train()


def test_the_pool_trains_a_text_env_on_its_team_reward(tmp_path: Path) -> None:
    """TicTacToe against the random opponent: tasks without ids (a game's seed), one
    agent, several steps, credit from the game's reward alone."""
    import re

    from langmarl.config.envs import TicTacToeConfig
    from langmarl.envs.registry import make_env
    from langmarl.testing import ScriptedLLM, scripted_config
    from langmarl.textgrad import CentralizedCritic, PolicyGradientOptimizer
    from langmarl.trainer.pool.search import PoolTrainer

    def player(request):  # legal moves once it has seen one; before, only the first move
        moves = re.findall(r"Available moves: ([\d, ]+)\.", request.messages[-1]["content"])
        free = [int(m) for m in moves[0].split(", ")] if moves else [5]
        copied = any(
            m["role"] == "assistant" and "<Action>" in m["content"] for m in request.messages
        )
        return f"<Action> {free[0]}" if copied or len(free) == 9 else "I am not sure."

    config = TicTacToeConfig(
        exp_name="ttt", play_style="random", search="pool", num_iterations=2,
        trajectories_per_iteration=6, validation_size=4, runs_dir=str(tmp_path),
        checkpoint_dir=str(tmp_path / "ck"), seed=1, pool={"children": 2},
    )  # fmt: skip
    llm = ScriptedLLM(player, config=scripted_config(max_retries=0))
    env = make_env("tictactoe", config)
    env.set_llm(llm)
    critic = CentralizedCritic(config, llm=llm)
    trainer = PoolTrainer(config, env, critic, PolicyGradientOptimizer(scripted_config(), llm=llm))
    metrics = trainer.train()
    assert [m["credit"] for m in metrics] == ["team", "team"]
    held = {json.dumps(t, sort_keys=True) for t in trainer.validator.tasks}
    for path in (tmp_path / "ttt" / "trajectories").rglob("*.json"):
        assert json.dumps(json.loads(path.read_text())["task"], sort_keys=True) not in held
    pool = pool_of(tmp_path, "ttt")
    best = max((c for c in pool if c.accepted), key=lambda c: c.score or 0.0)
    assert best.score > pool[0].score  # copying a legal move wins more games
    assert "<Action>" in DemoPolicy.parse(best.policies["player"]).demos[0].output


def test_a_rollout_budget_stops_the_run_after_the_round_that_spends_it(tmp_path: Path) -> None:
    trainer = make_trainer(tmp_path, "run", rounds=5, latency=0.0)
    trainer.config.pool.max_rollouts = 10  # round 0 plays 8 exploring + 3 per child
    metrics = trainer.train()
    assert len(metrics) == 1
    info = LocalStore(tmp_path).run_info("run")
    assert info["status"] == "stopped" and "rollout budget of 10" in info["error"]


def test_rewrites_from_language_gradients_join_the_children(tmp_path: Path) -> None:
    trainer = make_trainer(tmp_path, "run", rounds=1, latency=0.0, children=6)
    trainer.config.pool.rewrites = True
    trainer.train()
    rewrites = [c for c in pool_of(tmp_path, "run") if c.origin == "rewrite"]
    assert rewrites and all(c.score is not None and c.parents == [0] for c in rewrites)
    assert (tmp_path / "run" / "gradients").is_dir()  # the critic and optimizer ran
    kinds = {d["kind"] for d in LocalStore(tmp_path).load_update_decisions("run")}
    assert "rewrite" in kinds and "demonstration" in kinds
