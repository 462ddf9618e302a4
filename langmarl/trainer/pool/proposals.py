"""Children of a parent candidate: demonstration updates and merges (pure functions).

A demonstration update changes the demonstrations of one agent (``agent`` updates, taken
from that agent's best-credited answers) or of every agent at once from one task's best
combination (``joint`` updates: the agents' demonstrations then show the same task, which
is how a convention between them is passed on). It adds a demonstration while the agent
has fewer than ``max_demonstrations``, else replaces one at random; with
``drop_probability`` it drops one instead. A demonstration for a task the agent already
has a demonstration of replaces that one. Demonstrations beyond ``demo_char_budget``
characters are cut, oldest first, with a warning, so no candidate overflows a prompt.

Children alternate kinds: joint, then each agent in turn, and again. Every child differs
from its parent; a child that would not (nothing credited to draw from) is not proposed.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from langmarl.config.pool import PoolSettings
from langmarl.core.demos import Demonstration, DemoPolicy, fit_demos
from langmarl.core.records import AgentId, Policies
from langmarl.trainer.pool.candidates import Candidate, Origin
from langmarl.trainer.pool.credit import Answer, Credit

TOP = 6
"""Updates draw from the best this many credited answers (or joint examples)."""


@dataclass(frozen=True)
class Proposal:
    """A child to be scored."""

    origin: Origin
    parents: list[int]
    policies: Policies
    changed: list[AgentId] = field(default_factory=list)
    note: str = ""


def with_demo(
    policy: str, demo: Demonstration, settings: PoolSettings, rng: random.Random
) -> tuple[str, str]:
    """``policy`` with ``demo`` added (or replacing one); returns the text and what was done."""
    parsed = DemoPolicy.parse(policy)
    demos = list(parsed.demos)
    same = [i for i, d in enumerate(demos) if d.input == demo.input]
    if same:
        demos[same[0]] = demo
        action = "replaced the demonstration of the same input"
    elif len(demos) < settings.max_demonstrations:
        demos.append(demo)
        action = "added a demonstration"
    else:
        demos[rng.randrange(len(demos))] = demo
        action = "replaced a demonstration"
    fitted = fit_demos(tuple(demos), settings.demo_char_budget)  # warns when it cuts
    return parsed.with_demos(fitted).render(), action


def without_demo(policy: str, rng: random.Random) -> str | None:
    """``policy`` with one random demonstration dropped (``None`` if it has none)."""
    parsed = DemoPolicy.parse(policy)
    if not parsed.demos:
        return None
    demos = list(parsed.demos)
    demos.pop(rng.randrange(len(demos)))
    return parsed.with_demos(demos).render()


def _usable(answers: Sequence[Answer], settings: PoolSettings) -> list[Answer]:
    return [a for a in answers if a.credit >= settings.min_credit and a.output.strip()][:TOP]


def agent_update(
    parent: Candidate,
    agent_id: AgentId,
    credit: Credit,
    settings: PoolSettings,
    rng: random.Random,
) -> Proposal | None:
    """A demonstration update of ``agent_id`` (see the module docstring)."""
    policy = parent.policies[agent_id]
    if rng.random() < settings.drop_probability:
        dropped = without_demo(policy, rng)
        if dropped is not None:
            policies = {**parent.policies, agent_id: dropped}
            return Proposal(
                "demonstration",
                [parent.id],
                policies,
                [agent_id],
                f"{agent_id}: dropped a demonstration",
            )
    pool = _usable(credit.answers.get(agent_id, []), settings)
    if not pool:
        return None
    answer = rng.choice(pool)
    text, action = with_demo(policy, Demonstration(answer.input, answer.output), settings, rng)
    if text == policy:
        return None
    return Proposal(
        "demonstration",
        [parent.id],
        {**parent.policies, agent_id: text},
        [agent_id],
        f"{agent_id}: {action} (credit {answer.credit:.2f})",
    )


def joint_update(
    parent: Candidate, credit: Credit, settings: PoolSettings, rng: random.Random
) -> Proposal | None:
    """Every agent gets its answer of one task's best combination as a demonstration."""
    examples = [e for e in credit.joint[:TOP] if e.reward >= settings.min_credit]
    if not examples:
        return None
    example = rng.choice(examples)
    policies = dict(parent.policies)
    for agent_id, answer in example.answers.items():
        if agent_id in policies and answer.output.strip():
            demo = Demonstration(answer.input, answer.output)
            policies[agent_id], _ = with_demo(policies[agent_id], demo, settings, rng)
    changed = [a for a in policies if policies[a] != parent.policies[a]]
    if not changed:
        return None
    note = f"joint demonstration of {example.task_id} (reward {example.reward:.2f})"
    return Proposal("demonstration", [parent.id], policies, changed, note)


def demonstration_children(
    parent: Candidate,
    agent_ids: Sequence[AgentId],
    credit: Credit,
    settings: PoolSettings,
    count: int,
    rng: random.Random,
) -> list[Proposal]:
    """Up to ``count`` distinct children of ``parent`` (kinds alternate: joint, each agent)."""
    kinds: list[AgentId | None] = [None, *agent_ids]
    children: list[Proposal] = []
    seen = [parent.policies]
    for attempt in range(count * 4):
        if len(children) >= count:
            break
        kind = kinds[attempt % len(kinds)]
        if kind is None:
            child = joint_update(parent, credit, settings, rng)
        else:
            child = agent_update(parent, kind, credit, settings, rng)
        if child is not None and child.policies not in seen:
            seen.append(child.policies)
            children.append(child)
    return children


def merge_child(
    first: Candidate, second: Candidate, policies: Policies, taken: list[AgentId]
) -> Proposal:
    """The merge of ``first`` and ``second`` as a proposal."""
    note = f"merge of {first.id} and {second.id}: {', '.join(taken)} from {second.id}"
    return Proposal("merge", [first.id, second.id], policies, list(taken), note)
