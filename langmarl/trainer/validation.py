"""Validated updates: a candidate policy replaces an agent's current one only if the team
scores at least as well with it on a fixed validation batch.

One iteration's selection, agents in turn order::

    team = current policies
    best = score(team)                       # once per (batch, team): cached on disk
    for agent in agents:
        candidates = proposals[agent], without no-ops and duplicates
        scores = [score({**team, agent: c}) for c in candidates]   # concurrently
        winner = the highest score (the first on ties); failed scorings never win
        if winner is not None and winner.score >= best:
            team[agent], best = winner, winner.score
    return team, best                        # the kept policies and their score

Decisions:

- An agent's candidate plays with the *current* policies of its teammates. Agents are judged
  one after another, so "current" includes a teammate's candidate accepted earlier in the
  same iteration: every team the run keeps was scored as a whole, and the kept team's
  validation score never decreases. The kept policies are therefore the best so far, and
  they are what the checkpoint of the iteration holds.
- "Not lower" accepts ties: a rewrite that does as well keeps training moving.
- A candidate whose validation episodes fail (an LLM error after the client's retries, an
  environment error) is rejected with the reason. If the current team cannot be scored,
  every candidate of that iteration is rejected. Failed scorings are not cached, so a
  resumed run tries them again.
- A candidate identical to the current policy, or to an earlier candidate, is not scored.
- Scores are cached by (batch, team) in ``validation_scores.jsonl`` — with
  ``rescore_incumbent`` by (batch, team, iteration) — so the incumbent is scored once while
  it is unchanged, and a resumed iteration makes the same decisions without new episodes.
- Noise: the batch is small and actors may sample; a lucky incumbent score makes later
  candidates harder to accept. ``validation_size`` trades cost for noise.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Any

from langmarl.core.base import BaseEnvironment
from langmarl.core.errors import LangmarlError
from langmarl.core.records import AgentId, Policies, PolicyUpdate, Trajectory
from langmarl.store import LocalStore
from langmarl.trainer.decisions import (
    Selection,
    TeamScore,
    UpdateDecision,
    digest,
    pick_winner,
    verdict,
)

Collect = Callable[[Policies, dict[str, Any]], Awaitable[Trajectory]]


def agent_means(episodes: list[Trajectory]) -> dict[AgentId, float]:
    """Each agent's mean ``metadata["agent_rewards"]`` over ``episodes`` (empty unless
    every episode reports them)."""
    parts = [t.metadata.get("agent_rewards") for t in episodes]
    reported = [p for p in parts if isinstance(p, dict)]
    if not reported or len(reported) < len(parts):
        return {}
    agents = set.intersection(*(set(p) for p in reported))
    return {a: sum(float(p[a]) for p in reported) / len(reported) for a in agents}


class Validator:
    """Scores teams on the run's validation batch and selects the updates to keep.

    Args:
        store: The run's store.
        run_id: The run.
        collect: Runs one episode (the trainer's episode runner: verified reward, LLM
            failures turned into failed episodes).
        size: Tasks in the batch (``validation_size``).
        workers: Episodes played at once.
        rescore: Score the incumbent again every iteration (``rescore_incumbent``).

    Attributes:
        tasks: The validation batch (set by :meth:`open`).
        batch: Its hash (part of every cache key).
        on_scored: Called once per team scored (cached or played), for progress display.
    """

    def __init__(
        self,
        store: LocalStore,
        run_id: str,
        collect: Collect,
        *,
        size: int,
        workers: int,
        rescore: bool = False,
    ) -> None:
        self.store, self.run_id, self.collect = store, run_id, collect
        self.size, self.rescore, self.workers = size, rescore, max(1, workers)
        self.tasks: list[dict[str, Any]] = []
        self.batch = ""
        self._slots: asyncio.Semaphore | None = None
        self._cache: dict[str, TeamScore] = {}
        self.on_scored: Callable[[], None] = lambda: None

    def open(self, env: BaseEnvironment, seed: int) -> None:
        """Draw the run's batch (fixed by ``seed``), record it in ``validation.json`` and
        load the scores earlier attempts recorded."""
        rng = random.Random(f"{seed}:validation")
        self.tasks = env.sample_tasks(self.size, split="train", rng=rng)
        self.batch = digest(self.tasks)
        ids = [t.get("id") for t in self.tasks]
        record = {"size": self.size, "seed": seed, "batch": self.batch, "task_ids": ids}
        self.store.save_validation_batch(self.run_id, record)
        for line in self.store.load_validation_scores(self.run_id):
            self._cache[str(line["key"])] = TeamScore(
                score=line["score"],
                rewards=line["rewards"],
                agent_scores=line.get("agent_scores") or {},
            )

    def _key(self, policies: Policies, iteration: int) -> str:
        epoch = iteration if self.rescore else None
        return digest({"batch": self.batch, "team": policies, "epoch": epoch})

    async def score(self, policies: Policies, iteration: int) -> TeamScore:
        """The team's mean reward on the batch (cached; failures are not cached)."""
        key = self._key(policies, iteration)
        if key in self._cache:
            self.on_scored()
            return self._cache[key]

        slots = self._slots or asyncio.Semaphore(self.workers)

        async def one(task: dict[str, Any]) -> Trajectory:
            async with slots:
                try:
                    return await self.collect(dict(policies), task)
                except LangmarlError as exc:
                    return Trajectory(task=task, metadata={"error": str(exc)})

        episodes = await asyncio.gather(*(one(task) for task in self.tasks))
        self.on_scored()
        errors = [str(t.metadata["error"]) for t in episodes if t.metadata.get("error")]
        if errors:
            error = f"{len(errors)} of {len(episodes)} validation episodes failed: {errors[0]}"
            return TeamScore(error=error, episodes_run=len(episodes))
        rewards = [float(t.reward) for t in episodes]
        scored = TeamScore(
            score=sum(rewards) / len(rewards), rewards=rewards, agent_scores=agent_means(episodes)
        )
        self._cache[key] = scored
        record = {"key": key, "batch": self.batch, "iteration": iteration, **scored.model_dump()}
        self.store.append_validation_score(self.run_id, record)
        return scored.model_copy(update={"episodes_run": len(episodes)})

    async def score_all(self, teams: list[Policies], iteration: int) -> list[TeamScore]:
        """Scores of ``teams``, concurrently (at most ``workers`` episodes at a time)."""
        self._slots = asyncio.Semaphore(self.workers)  # one per event loop
        return list(await asyncio.gather(*(self.score(team, iteration) for team in teams)))

    async def select(
        self, iteration: int, policies: Policies, proposals: dict[AgentId, list[PolicyUpdate]]
    ) -> Selection:
        """Judge every agent's candidates in turn order (see the module docstring)."""
        self._slots = asyncio.Semaphore(self.workers)  # one per event loop
        team = dict(policies)
        best: TeamScore | None = None
        updates: list[PolicyUpdate] = []
        decisions: list[UpdateDecision] = []
        played = 0
        for agent_id, candidates in proposals.items():
            fresh, skipped = self._screen(iteration, team[agent_id], candidates)
            scored = await self._score_candidates(iteration, team, agent_id, fresh, best)
            scores, best, played = scored[0], scored[1], played + scored[2]
            judged, accepted = self._judge(iteration, fresh, scores, best)
            decisions += sorted(skipped + judged, key=lambda d: d.candidate)
            if accepted is None:
                updates.append(self._kept(agent_id, team[agent_id], decisions, candidates))
            else:
                team[agent_id], best = accepted[1].new_policy, scores[accepted[0]]
                updates.append(accepted[1])
        if best is None:  # no candidate at all: the kept team's score, for the metrics
            best = await self.score(team, iteration)
            played += best.episodes_run
        return Selection(
            policies=team, score=best.score, updates=updates, decisions=decisions,
            episodes_run=played,
        )  # fmt: skip

    async def _score_candidates(
        self,
        iteration: int,
        team: Policies,
        agent_id: AgentId,
        fresh: list[tuple[int, PolicyUpdate]],
        best: TeamScore | None,
    ) -> tuple[list[TeamScore], TeamScore | None, int]:
        """Scores of ``agent_id``'s ``fresh`` candidates, concurrently with the current
        team's if that was not scored yet; returns them, the current team's score and the
        episodes played. Nothing is played once the current team failed to score: there is
        nothing to compare with."""
        if not fresh:
            return [], best, 0
        if best is not None and best.score is None:
            return [TeamScore(error="not scored") for _ in fresh], best, 0
        jobs = [self.score({**team, agent_id: c.new_policy}, iteration) for _, c in fresh]
        if best is None:
            jobs.insert(0, self.score(team, iteration))
        scores = list(await asyncio.gather(*jobs))
        played = sum(s.episodes_run for s in scores)
        if best is None:
            return scores[1:], scores[0], played
        return scores, best, played

    def _screen(
        self, iteration: int, current: str, candidates: list[PolicyUpdate]
    ) -> tuple[list[tuple[int, PolicyUpdate]], list[UpdateDecision]]:
        """Split candidates into those to score and decisions for the rest (no candidate,
        identical to the current policy, duplicate of an earlier candidate)."""
        fresh: list[tuple[int, PolicyUpdate]] = []
        skipped: list[UpdateDecision] = []
        seen: dict[str, int] = {}
        for index, update in enumerate(candidates):
            reason = None
            if update.method == "kept":
                reason = f"no candidate: {update.error or 'no gradient for this agent'}"
            elif update.new_policy == current:
                reason = "identical to the current policy"
            elif update.new_policy in seen:
                reason = f"duplicate of candidate {seen[update.new_policy]}"
            if reason is None:
                seen[update.new_policy] = index
                fresh.append((index, update))
                continue
            skipped.append(self._decision(iteration, index, update, None, None, False, reason))
        return fresh, skipped

    def _judge(
        self,
        iteration: int,
        fresh: list[tuple[int, PolicyUpdate]],
        scores: list[TeamScore],
        best: TeamScore | None,
    ) -> tuple[list[UpdateDecision], tuple[int, PolicyUpdate] | None]:
        """Decisions for the scored candidates, and the accepted one (position in
        ``fresh``, update) if any."""
        winner = pick_winner(scores)
        incumbent = best if best is not None else TeamScore(error="not scored")
        accepted: tuple[int, PolicyUpdate] | None = None
        decisions = []
        for position, ((index, update), scored) in enumerate(zip(fresh, scores, strict=True)):
            ok, reason = verdict(scored, incumbent)
            if ok and position != winner and winner is not None:
                ok = False
                reason = f"candidate {fresh[winner][0]} scored higher ({scores[winner].score:.3f})"
            if ok:
                accepted = (position, update)
            decisions.append(
                self._decision(iteration, index, update, scored.score, incumbent.score, ok, reason)
            )
        return decisions, accepted

    @staticmethod
    def _decision(
        iteration: int,
        index: int,
        update: PolicyUpdate,
        score: float | None,
        incumbent: float | None,
        accepted: bool,
        reason: str,
    ) -> UpdateDecision:
        return UpdateDecision(
            iteration=iteration,
            agent_id=update.agent_id,
            candidate=index,
            kind=update.method,
            policy=update.new_policy,
            score=score,
            incumbent_score=incumbent,
            accepted=accepted,
            reason=reason,
            error=update.error,
        )

    @staticmethod
    def _kept(
        agent_id: AgentId,
        policy: str,
        decisions: list[UpdateDecision],
        candidates: list[PolicyUpdate],
    ) -> PolicyUpdate:
        """The update record of an agent whose policy stays: ``kept``, with why."""
        mine = [d for d in decisions if d.agent_id == agent_id]
        reason = "; ".join(f"candidate {d.candidate}: {d.reason}" for d in mine)
        gradient = candidates[0].aggregated_gradient if candidates else ""
        return PolicyUpdate(
            agent_id=agent_id,
            method="kept",
            new_policy=policy,
            aggregated_gradient=gradient,
            error=f"not replaced ({reason})" if mine else "no candidate",
        )
