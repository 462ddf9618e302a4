"""What a language run's directory records beside its checkpoints: every config it was
trained with, and its progress (``metrics.json`` and ``run.json``'s counts).

Both are rewritten from what is on disk (the config given, the checkpoints), so a resumed
run records the same whatever moment the last process stopped at.
"""

from __future__ import annotations

from typing import Any

from langmarl.store import LocalStore, PolicyCheckpoint, RunLogger

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
