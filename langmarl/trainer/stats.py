"""Pure helpers of the trainer: iteration statistics, seeding, mini-batches."""

from __future__ import annotations

import random
from typing import Any

from langmarl.core.records import Evaluation, Gradient, PolicyUpdate, Trajectory


def iteration_rng(seed: int, iteration: int, purpose: str) -> random.Random:
    """A generator that depends only on (seed, iteration, purpose), so a resumed iteration
    samples the same tasks and mini-batch as the interrupted attempt."""
    return random.Random(f"{seed}:{iteration}:{purpose}")


def mini_batch(episode_ids: list[int], size: int | None, rng: random.Random) -> list[int]:
    """``size`` of ``episode_ids`` chosen by ``rng`` (all of them if ``size`` is ``None``
    or not smaller), in ascending order."""
    if size is None or size >= len(episode_ids):
        return list(episode_ids)
    return sorted(rng.sample(episode_ids, size))


def usage_totals(by_role: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Sum per-role usage into ``input_tokens``/``output_tokens``/``total_tokens``/
    ``cost_usd``/``llm_calls``/``llm_failures``."""
    return {
        "input_tokens": sum(r.get("input_tokens", 0) for r in by_role.values()),
        "output_tokens": sum(r.get("output_tokens", 0) for r in by_role.values()),
        "total_tokens": sum(r.get("total_tokens", 0) for r in by_role.values()),
        "cost_usd": sum(r.get("cost_usd", 0.0) for r in by_role.values()),
        "llm_calls": sum(r.get("calls", 0) for r in by_role.values()),
        "llm_failures": sum(r.get("failures", 0) for r in by_role.values()),
    }


def iteration_stats(
    iteration: int,
    paradigm: str,
    trajectories: list[Trajectory],
    evaluations: dict[int, Evaluation],
    gradients: dict[int, list[Gradient]],
    updates: list[PolicyUpdate],
    usage_by_role: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """The statistics of one iteration: the reference keys (``paradigm``,
    ``num_episodes``, ``avg_reward``, ``min_reward``, ``max_reward``, ``rewards``,
    ``input_tokens``, ``output_tokens``, ``total_tokens``, ``cost_usd``) summed over every
    role, plus ``usage_by_role`` and counts of what failed or fell back."""
    rewards = [t.reward for t in trajectories]
    usage = {role: u for role, u in usage_by_role.items() if u.get("calls", 0)}
    return {
        "iteration": iteration,
        "paradigm": paradigm,
        "num_episodes": len(trajectories),
        "avg_reward": sum(rewards) / len(rewards) if rewards else 0.0,
        "min_reward": min(rewards, default=0.0),
        "max_reward": max(rewards, default=0.0),
        "rewards": rewards,
        **usage_totals(usage),
        "usage_by_role": usage,
        "failed_episodes": sum(1 for t in trajectories if t.metadata.get("error")),
        "evaluated_episodes": len(evaluations),
        "critic_failures": sum(1 for e in evaluations.values() if e.error),
        "critic_fallbacks": sum(1 for e in evaluations.values() if e.parse_status == "fallback"),
        "gradients": sum(1 for gs in gradients.values() for g in gs if not g.error),
        "gradient_failures": sum(1 for gs in gradients.values() for g in gs if g.error),
        "policy_updates": {u.agent_id: u.method for u in updates},
    }
