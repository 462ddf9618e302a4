"""One Overcooked episode: the package MDP's state, each cook's current skill, the clock.

Loop (driven by :class:`~langmarl.envs.overcooked.env.OvercookedEnv`)::

    while not episode.done:
        for cook in episode.awaiting():          # cooks without a skill
            episode.assign(cook, decide(cook))   # LLM reply or scripted choice
        episode.tick()                           # one joint primitive step of the MDP

A skill ends when the cook's interact changed something (its hand or the station: done),
when an interact changed nothing (failed), or when the cook made no progress for
:data:`STUCK_TICKS` ticks (failed: blocked). A skill that cannot start (wrong thing in
hand, nothing reachable) fails at once and the cook stays for that tick; ``wait`` lasts
one tick. So every decision costs at least one tick, and an episode asks each cook at most
``horizon`` times. The reward is the MDP's sparse reward: 20 per delivered onion soup.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langmarl.envs.overcooked.kitchen import Kitchen, Pos, step_from
from langmarl.envs.overcooked.planner import INTERACT, STAY, Primitive, next_action
from langmarl.envs.overcooked.skills import Skill, pot_soup, skill_targets

STUCK_TICKS = 8
"""Ticks without moving, turning or interacting after which a skill fails as blocked."""

COUNTED_EVENTS = ("onion_pickup", "potting_onion", "dish_pickup", "soup_pickup", "soup_delivery")
"""The package's event types counted per cook (for the critic's facts)."""


@dataclass
class CookTask:
    """What one cook is doing."""

    skill: Skill
    stations: list[Pos] = field(default_factory=list)
    stuck: int = 0
    ticks: int = 0


@dataclass
class SkillResult:
    """How a cook's skill ended: ``ok`` false with ``reason`` when it failed."""

    skill: Skill
    ok: bool
    reason: str = ""
    timestep: int = 0


class Episode:
    """The state of one episode (create one per episode: nothing is shared).

    Args:
        mdp: The package's ``OvercookedGridworld`` (stateless; shared is fine).
        kitchen: Its :class:`Kitchen`.
        horizon: Ticks in the episode.
    """

    def __init__(self, mdp: Any, kitchen: Kitchen, horizon: int) -> None:
        self.mdp = mdp
        self.kitchen = kitchen
        self.horizon = horizon
        self.state = mdp.get_standard_start_state()
        self.tasks: list[CookTask | None] = [None, None]
        self.results: list[list[SkillResult]] = [[], []]
        self.reward = 0.0
        self.soups = 0
        self.events = [dict.fromkeys(COUNTED_EVENTS, 0) for _ in range(2)]

    @property
    def timestep(self) -> int:
        """Ticks played so far."""
        return int(self.state.timestep)

    @property
    def done(self) -> bool:
        """Whether the horizon is reached."""
        return self.timestep >= self.horizon

    def awaiting(self) -> list[int]:
        """The cooks that need a new skill before the next tick."""
        return [] if self.done else [i for i, task in enumerate(self.tasks) if task is None]

    def last_result(self, cook: int) -> SkillResult | None:
        """How ``cook``'s previous skill ended."""
        return self.results[cook][-1] if self.results[cook] else None

    def assign(self, cook: int, skill: Skill) -> str | None:
        """Give ``cook`` a skill; returns why it cannot be done (then the cook waits a tick)."""
        stations, reason = skill_targets(self.kitchen, self.state, cook, skill)
        if reason is not None:
            self.tasks[cook] = CookTask(Skill.WAIT)
            self.results[cook].append(SkillResult(skill, False, reason, self.timestep))
            return reason
        self.tasks[cook] = CookTask(skill, stations)
        return None

    def tick(self) -> float:
        """One joint primitive step; returns its reward."""
        actions: list[Primitive] = []
        working: list[Pos | None] = []
        for cook, task in enumerate(self.tasks):
            action, station = self._action(cook, task)
            actions.append(action)
            working.append(station)
        yielding = self.timestep % 2  # alternate who gives way, so neither starves
        if _collide(self.state, actions):
            actions[yielding] = STAY
        before = self.state
        self.state, infos = self.mdp.get_state_transition(before, actions)
        reward = float(sum(infos["sparse_reward_by_agent"]))
        self.reward += reward
        for cook in range(2):
            for event in COUNTED_EVENTS:
                self.events[cook][event] += int(infos["event_infos"][event][cook])
        self.soups += sum(int(x) for x in infos["event_infos"]["soup_delivery"])
        for cook in range(2):
            self._update(cook, actions[cook], working[cook], before)
        return reward

    def _action(self, cook: int, task: CookTask | None) -> tuple[Primitive, Pos | None]:
        if task is None or task.skill is Skill.WAIT:
            return STAY, None
        action, station = next_action(self.kitchen, self.state, cook, task.stations)
        if action == INTERACT and task.skill is Skill.FILL_DISH and station is not None:
            soup = pot_soup(self.state, station)
            if soup is not None and not soup.is_ready:
                return STAY, station  # beside the pot, waiting for the soup
        return action, station

    def _update(self, cook: int, action: Primitive, station: Pos | None, before: Any) -> None:
        task = self.tasks[cook]
        if task is None:
            return
        task.ticks += 1
        if task.skill is Skill.WAIT:
            self.tasks[cook] = None
            if not self.results[cook] or self.results[cook][-1].timestep != before.timestep:
                self.results[cook].append(SkillResult(Skill.WAIT, True, "", before.timestep))
            return
        if action == INTERACT:
            changed = _snapshot(before, cook, station) != _snapshot(self.state, cook, station)
            reason = "" if changed else "the interact changed nothing"
            self._finish(cook, SkillResult(task.skill, changed, reason, before.timestep))
            return
        moved = before.players[cook].pos_and_or != self.state.players[cook].pos_and_or
        waiting_at_pot = station is not None and action == STAY
        task.stuck = 0 if moved or waiting_at_pot else task.stuck + 1
        if task.stuck >= STUCK_TICKS:
            reason = f"blocked for {STUCK_TICKS} ticks (the other cook is in the way)"
            self._finish(cook, SkillResult(task.skill, False, reason, before.timestep))

    def _finish(self, cook: int, result: SkillResult) -> None:
        self.results[cook].append(result)
        self.tasks[cook] = None


def _collide(state: Any, actions: list[Primitive]) -> bool:
    """Whether both cooks' moves would bump into each other (same tile or a swap), which
    in the MDP leaves both in place: planned symmetrically, they would bump forever."""
    if not all(isinstance(a, tuple) and a != STAY for a in actions):
        return False
    here = [p.position for p in state.players]
    there = [step_from(here[i], actions[i]) for i in range(2)]  # type: ignore[arg-type]
    return there[0] == there[1] or (there[0] == here[1] and there[1] == here[0])


def _snapshot(state: Any, cook: int, station: Pos | None) -> tuple[Any, Any]:
    """What an interact at ``station`` can change: the cook's hand and the station's object."""
    held = state.players[cook].held_object
    at_station = state.objects.get(station) if station is not None else None
    return (None if held is None else held.to_dict()), (
        None if at_station is None else at_station.to_dict()
    )
