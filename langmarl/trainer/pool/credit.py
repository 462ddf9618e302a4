"""Credit by numbers: which of an exploration round's answers deserve to become
demonstrations.

A 135M model cannot write a credible critique, but an environment's reward can say what
each agent's answer was worth. In order of preference:

1. **Counterfactual** — where the environment can score any combination of the agents'
   answers to one task (``score_outputs``, e.g. the poster's independent answers), every
   combination of the round's answers to that task is scored: an answer's credit is the
   best joint reward it takes part in, and the best combination becomes a *joint* example
   (one demonstration per agent, from the same task) — that is how a shared convention
   between agents is found even when no single episode shows it.
2. **Reported parts** — ``metadata["agent_rewards"]`` of an episode.
3. **Team reward** — the episode's reward for every agent (said once, as a warning).

With 2 and 3 every step of a multi-step episode (a game's moves) is an answer that earns
the episode's credit; the recombination of 1 uses each agent's last answer.

Everything here is pure: episodes in, ranked answers out.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langmarl.core.records import AgentId, Trajectory

log = logging.getLogger(__name__)

Scorer = Callable[[dict[str, Any], dict[AgentId, str]], tuple[float, dict[AgentId, float]]]
CreditSource = Literal["counterfactual", "parts", "team"]
MAX_COMBINATIONS = 4096
"""Combinations scored per task at most (the first ones in a fixed order)."""


@dataclass(frozen=True)
class Answer:
    """One agent's answer to one task, with what it earned."""

    agent_id: AgentId
    task_id: str
    input: str
    output: str
    credit: float


@dataclass(frozen=True)
class JointExample:
    """The best-scoring combination of the agents' answers to one task."""

    task_id: str
    reward: float
    answers: dict[AgentId, Answer]


@dataclass(frozen=True)
class Credit:
    """A round's answers ranked for demonstrations."""

    source: CreditSource
    answers: dict[AgentId, list[Answer]]
    """Per agent, best credit first (distinct outputs per task)."""
    joint: list[JointExample]
    """Per task, its best combination; best reward first."""


def task_key(task: dict[str, Any]) -> str:
    """What identifies a task: its ``id``, else its content without the exploration seed
    (tasks without ids, such as a game's seed)."""
    if task.get("id") is not None:
        return str(task["id"])
    plain = {k: v for k, v in task.items() if k != "sample_seed"}
    return json.dumps(plain, sort_keys=True, default=str)


def _task_id(trajectory: Trajectory) -> str:
    return task_key(trajectory.task)


def _answers(trajectory: Trajectory) -> dict[AgentId, tuple[str, str]]:
    """Agent → (observation, action) of its last step (its answer in a one-step episode)."""
    return {s.agent_id: (s.observation, s.action) for s in trajectory.steps}


def assign_credit(
    trajectories: Sequence[Trajectory], agent_ids: Sequence[AgentId], scorer: Scorer | None
) -> Credit:
    """Rank the usable episodes' answers (see the module docstring)."""
    usable = [t for t in trajectories if not t.metadata.get("error") and t.steps]
    by_task: dict[str, list[Trajectory]] = {}
    for trajectory in usable:
        by_task.setdefault(_task_id(trajectory), []).append(trajectory)
    if scorer is not None:
        source: CreditSource = "counterfactual"
        found = [_recombine(episodes, agent_ids, scorer) for episodes in by_task.values()]
        answers = [a for per_task, _ in found for a in per_task]
        joint = [example for _, example in found if example is not None]
    else:
        has_parts = all(isinstance(t.metadata.get("agent_rewards"), dict) for t in usable)
        source = "parts" if has_parts else "team"
        answers = [a for t in usable for a in _episode_answers(t, has_parts)]
        joint = [e for e in (_episode_example(t) for t in usable) if e is not None]
    ranked = {a: _rank([x for x in answers if x.agent_id == a]) for a in agent_ids}
    joint.sort(key=lambda e: -e.reward)
    return Credit(source=source, answers=ranked, joint=_distinct_tasks(joint))


def _rank(answers: list[Answer]) -> list[Answer]:
    """Best credit first; one entry per (task, output), keeping its highest credit."""
    best: dict[tuple[str, str], Answer] = {}
    for answer in answers:
        key = (answer.task_id, answer.output)
        if key not in best or answer.credit > best[key].credit:
            best[key] = answer
    return sorted(best.values(), key=lambda a: -a.credit)


def _distinct_tasks(examples: list[JointExample]) -> list[JointExample]:
    seen: set[str] = set()
    kept = []
    for example in examples:
        if example.task_id not in seen:
            seen.add(example.task_id)
            kept.append(example)
    return kept


def _recombine(
    episodes: list[Trajectory], agent_ids: Sequence[AgentId], scorer: Scorer
) -> tuple[list[Answer], JointExample | None]:
    """Score every combination of the agents' answers to one task."""
    task, task_id = episodes[0].task, _task_id(episodes[0])
    options: dict[AgentId, list[tuple[str, str]]] = {a: [] for a in agent_ids}
    for trajectory in episodes:
        for agent_id, pair in _answers(trajectory).items():
            if agent_id in options and pair not in options[agent_id]:
                options[agent_id].append(pair)
    if any(not choices for choices in options.values()):
        return [], None
    credit: dict[tuple[AgentId, str], float] = {}
    best: tuple[float, dict[AgentId, tuple[str, str]]] | None = None
    combos = itertools.product(*(options[a] for a in agent_ids))
    for combo in itertools.islice(combos, MAX_COMBINATIONS):
        chosen = dict(zip(agent_ids, combo, strict=True))
        reward, _ = scorer(task, {a: pair[1] for a, pair in chosen.items()})
        for agent_id, (_, output) in chosen.items():
            key = (agent_id, output)
            credit[key] = max(credit.get(key, float("-inf")), reward)
        if best is None or reward > best[0]:
            best = (reward, chosen)
    answers = [
        Answer(agent_id, task_id, pair[0], pair[1], credit[(agent_id, pair[1])])
        for agent_id, choices in options.items()
        for pair in choices
    ]
    if best is None:
        return answers, None
    reward, chosen = best
    joint = {
        a: Answer(a, task_id, pair[0], pair[1], credit[(a, pair[1])]) for a, pair in chosen.items()
    }
    return answers, JointExample(task_id, reward, joint)


def _episode_answers(trajectory: Trajectory, has_parts: bool) -> list[Answer]:
    """Every step's answer, each with its agent's credit for the episode (a multi-step
    episode's moves all earn the episode's outcome)."""
    parts = trajectory.metadata.get("agent_rewards") or {}
    task_id = _task_id(trajectory)
    return [
        Answer(step.agent_id, task_id, step.observation, step.action,
               float(parts.get(step.agent_id, 0.0)) if has_parts else float(trajectory.reward))
        for step in trajectory.steps
    ]  # fmt: skip


def _episode_example(trajectory: Trajectory) -> JointExample | None:
    answers = {
        a: Answer(a, _task_id(trajectory), obs, act, float(trajectory.reward))
        for a, (obs, act) in _answers(trajectory).items()
    }
    return (
        JointExample(_task_id(trajectory), float(trajectory.reward), answers) if answers else None
    )
