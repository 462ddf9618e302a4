"""What a language run's directory records beside its checkpoints: every config it was
trained with, and its progress (``metrics.json`` and ``run.json``'s counts); and what
``langmarl runs show`` and the dashboard add for a language run (:func:`language_details`,
the language kinds' ``details`` entry point).

Both records are rewritten from what is on disk (the config given, the checkpoints), so a
resumed run records the same whatever moment the last process stopped at.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langmarl.core.records import AgentId, Policies
from langmarl.store import LocalStore, PolicyCheckpoint, RunLogger
from langmarl.store.run import RunDir

CONFIG_FILE = "config.json"
CONFIG_HISTORY_FILE = "config_history.jsonl"


def record_config(store: LocalStore, run_id: str, current: dict[str, Any], log: RunLogger) -> None:
    """Write ``config.json``; when a resumed run's config changed (e.g. ``--set
    num_iterations=5``), keep the earlier one in ``config_history.jsonl`` and log which
    fields changed, so the run records every config it was trained with."""
    previous = store.read_json(run_id, CONFIG_FILE)
    if previous == current:
        return
    if previous is not None:
        changed = sorted(k for k in {*previous, *current} if previous.get(k) != current.get(k))
        store.append_event(run_id, CONFIG_HISTORY_FILE, previous)
        log.info(f"config changed on resume: {', '.join(changed)}")
    store.write_json(run_id, CONFIG_FILE, current)


def sync_progress(
    store: LocalStore, run_id: str, checkpoint: PolicyCheckpoint
) -> list[dict[str, Any]]:
    """Rewrite ``metrics.json`` and the run's progress (completed iterations, best and last
    reward) from the checkpoints; returns the metrics, one stats dict per iteration."""
    metrics = checkpoint.all_stats()
    store.save_metrics(run_id, metrics)
    rewards = [m.get("avg_reward", 0.0) for m in metrics]
    store.update_run(
        run_id,
        completed_iterations=len(metrics),
        best_reward=max(rewards) if rewards else None,
        last_reward=rewards[-1] if rewards else None,
    )
    return metrics


@dataclass(frozen=True)
class LanguageDetails:
    """A language run's checkpoints, its newest policies and their diffs from the first."""

    iterations: list[int] = field(default_factory=list)
    """The complete checkpoints (0: the starting policies)."""
    policies: Policies = field(default_factory=dict)
    """The newest checkpoint's policies, by agent."""
    diffs: dict[AgentId, str] = field(default_factory=dict)
    """Each agent's unified diff from the first checkpoint to the newest ("" unchanged)."""
    diff_from: int | None = None
    diff_to: int | None = None


def language_details(run: Path) -> LanguageDetails:
    """What ``langmarl runs show`` adds for the language run in ``run``.

    Raises:
        RunFileError: if its ``run.json`` is corrupt.
    """
    agent_ids = list((RunDir(run).read() or {}).get("agent_ids") or [])
    checkpoint = PolicyCheckpoint(LocalStore(run.parent), run.name, len(agent_ids), agent_ids)
    iterations = checkpoint.iterations()
    if not iterations:
        return LanguageDetails()
    first, last = iterations[0], iterations[-1]
    return LanguageDetails(
        iterations=iterations,
        policies=checkpoint.get_policies(last),
        diffs=checkpoint.diff_policies(first, last),
        diff_from=first,
        diff_to=last,
    )
