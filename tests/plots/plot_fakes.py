"""Small run directories of every kind, written with the real writers (store, JSONL appends,
PARL curves, Prompt2Policy records), with numbers chosen by the tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langmarl.core.files import append_jsonl, atomic_write_json
from langmarl.core.records import Trajectory
from langmarl.p2p.session.contracts import EvalCheckpoint, JudgeScore, JudgmentResult
from langmarl.p2p.session.records import IterationRecord, SessionRecord
from langmarl.parl.curves import CURVES_FILE, curves_document, episode_row
from langmarl.store import LocalStore
from langmarl.trainer.stats import iteration_stats


def language_run(
    base: Path,
    rewards: list[list[float]],
    run_id: str = "lang",
    extra: list[dict[str, Any]] | None = None,
    evals: dict[tuple[str, int], float] | None = None,
) -> Path:
    """A finished store run: iteration ``i`` had episodes with ``rewards[i]``; ``extra[i]``
    is merged into its stats record; ``evals[(split, n)]`` is the held-out reward of
    checkpoint ``n``."""
    store = LocalStore(base)
    store.start_run(run_id, env="language", target_iterations=len(rewards))
    metrics = []
    for iteration, episode_rewards in enumerate(rewards):
        trajectories = [Trajectory(reward=r) for r in episode_rewards]
        stats = iteration_stats(iteration, "central_credit", trajectories, {}, {}, [], {})
        metrics.append({**stats, **(extra[iteration] if extra else {})})
    store.save_metrics(run_id, metrics)
    for (split, checkpoint), reward in (evals or {}).items():
        result = {"split": split, "iteration": checkpoint, "avg_reward": reward}
        store.write_json(run_id, f"evals/{split}_iter_{checkpoint:04d}.json", result)
    store.update_run(run_id, completed_iterations=len(rewards))
    store.set_status(run_id, "completed")
    return store.run_dir(run_id)


def weight_run(
    run_dir: Path,
    rewards: list[float],
    algorithm: str = "magrpo",
    returns: list[float] | None = None,
    **per_step: list[float],
) -> Path:
    """``config.json`` + one ``metrics.jsonl`` line per step: ``reward_mean`` is
    ``rewards[i]``, ``return_mean`` is ``returns[i]`` (default: the reward, as with one
    turn); ``per_step`` adds keys such as ``agent-0/kl``."""
    atomic_write_json(run_dir / "config.json", {"algorithm": algorithm, "num_agents": 2})
    for index, reward in enumerate(rewards):
        line = {"step": index + 1, "reward_turn0": reward, "reward_mean": reward}
        line["return_mean"] = returns[index] if returns else reward
        line.update({key: values[index] for key, values in per_step.items()})
        append_jsonl(run_dir / "metrics.jsonl", line)
    return run_dir


def parl_curves(run_dir: Path, steps: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """Write ``parl_curves.json`` (as ``OrchestratorGRPO`` and ``PARLCallback`` do) and
    return it; ``steps[s]`` lists the PARL terms of step ``s``'s episodes."""
    rows = [
        episode_row(step, {"task_id": f"t{i}", "parl": terms})
        for step, episodes in enumerate(steps)
        for i, terms in enumerate(episodes)
    ]
    document = curves_document(rows)
    atomic_write_json(run_dir / CURVES_FILE, document)
    return document


def grpo_run(run_dir: Path, steps: list[list[dict[str, Any]]]) -> Path:
    """A GRPO orchestrator run: :func:`parl_curves` and the per-step ``metrics.json``."""
    document = parl_curves(run_dir, steps)
    atomic_write_json(run_dir / "metrics.json", [{**p, "loss": 0.1} for p in document["curve"]])
    return run_dir


def train_row(step: int, episodic_return: float, **terms: float) -> dict[str, Any]:
    """A ``type=train`` scalars row as ``langmarl.p2p.learner.sb3_trainer.train_row`` writes it."""
    return {
        "type": "train", "step": step, "episodic_return": episodic_return,
        "episode_length": 100.0, "env_reward_mean": 0.5, "term_means": terms,
        "steps_per_second": 1000.0, "time_s": step / 1000,
    }  # fmt: skip


def eval_row(step: int, mean_return: float, env_return: float = 0.0) -> dict[str, Any]:
    """A ``type=eval`` scalars row (an ``EvalCheckpoint``)."""
    checkpoint = EvalCheckpoint(
        step=step, mean_return=mean_return, p10_return=mean_return, median_return=mean_return,
        p90_return=mean_return, mean_env_return=env_return, mean_length=100.0,
    )  # fmt: skip
    return {"type": "eval", **checkpoint.model_dump()}


def p2p_run(record: IterationRecord, train: list[tuple[int, float]], evals: list[Any]) -> None:
    """Scalars of one PPO run: ``train`` = (step, return); ``evals`` = (step, return, env)."""
    for step, value in train:
        append_jsonl(record.scalars_path, train_row(step, value, forward=value / 2, ctrl=-0.1))
    for step, value, env_return in evals:
        append_jsonl(record.scalars_path, eval_row(step, value, env_return))


def p2p_session(
    path: Path, scores: list[float], judges: dict[str, list[float]] | None = None
) -> SessionRecord:
    """A session of ``len(scores)`` judged iterations, each with a short training curve."""
    session = SessionRecord(path)
    session.save_metadata({"prompt": "run", "env_id": "X-v5", "config": {"pass_threshold": 0.7}})
    for index, score in enumerate(scores):
        iteration = session.new_iteration(index + 1)
        p2p_run(iteration, [(512, index + 1.0), (1024, index + 2.0)], [(1024, index + 3.0, 0.0)])
        per_judge = [
            JudgeScore(judge=name, score=values[index]) for name, values in (judges or {}).items()
        ]
        iteration.save_judgment(JudgmentResult(intent_score=score, judges=per_judge))
    session.save_history({"session_id": path.name, "status": "max_iterations"})
    return session
