"""`PoolTrainer`: language-space training with a Pareto pool of candidates (``search: pool``).

One iteration is one round::

    pool   = candidates of earlier rounds (pool.jsonl); round 0 scores the starting policies
    parent = a candidate of the Pareto front, drawn by the tasks it wins     (seeded per round)
    episodes = trajectories_per_iteration exploration episodes with the parent's policies,
               samples_per_task per task, at explore_temperature, on training tasks outside
               the validation batch
    credit   = numeric credit of every answer (counterfactual, reported parts or team reward)
    children = demonstration updates of the parent (+ one merge of two front candidates,
               + rewrites from the critic's language gradients with ``pool.rewrites``)
    for child in children (concurrently): score it on the validation batch (greedy)
        it joins the pool if its score is not lower than its first parent's    (the gate)
    checkpoint i + 1 = the best candidate's policies (highest validation mean)

Everything is recorded: every candidate with its per-task scores, parents, origin and
decision in ``pool.jsonl``, every decision in ``updates.jsonl``. A killed round is played
again on resume from the newest checkpoint: stored episodes and cached validation scores
are reused, and the children are the same (drawn from a generator seeded by the round), so
the same decisions are made without new episodes.

Decisions:

- The gate compares a child with its first parent on the same validation batch: the
  pool's best never gets worse, and a candidate that wins one task survives on the front.
- When no child is ever accepted, the best candidate is the starting one and the run says
  so; checkpoints then keep the starting policies.
- Validation and held-out evaluation are greedy where the environment can be told
  (:meth:`exploring`); elsewhere exploration uses the actor's own temperature (said once).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any, cast

from langmarl.core.base import Exploring, ScoresOutputs
from langmarl.core.errors import ConfigError, RunFailedError
from langmarl.core.records import PolicyUpdate, Trajectory
from langmarl.llm.tracker import UsageLedger
from langmarl.trainer.decisions import Kind, UpdateDecision
from langmarl.trainer.monte_carlo import MonteCarloTrainer
from langmarl.trainer.phase_host import PhaseHooks
from langmarl.trainer.phases import PhaseRunner
from langmarl.trainer.pool.candidates import (
    Candidate,
    best_candidate,
    from_score,
    gate,
    merge_pair,
    merge_policies,
    pareto_front,
    select_parent,
)
from langmarl.trainer.pool.credit import Credit, assign_credit, task_key
from langmarl.trainer.pool.proposals import Proposal, demonstration_children, merge_child
from langmarl.trainer.pool.records import PoolLog
from langmarl.trainer.stats import iteration_rng, iteration_stats


class PoolTrainer(MonteCarloTrainer):
    """Language-space training by a pool of candidates (see the module docstring).

    Takes the arguments of :class:`MonteCarloTrainer`; ``config.search`` is ``"pool"``
    and ``config.pool`` holds the search's settings.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pool_log = PoolLog(self.store, self.run_id)
        self._said: set[str] = set()

    def _say_once(self, key: str, message: str) -> None:
        if key not in self._said:
            self._said.add(key)
            self.logger.warning(message)

    # -- the round ----------------------------------------------------------------------------
    async def arun_iteration(self, iteration: int) -> dict[str, Any]:
        """One round (see the module docstring); returns its statistics."""
        started, before = time.monotonic(), self.ledger.by_role()
        settings = self.config.pool
        phases = PhaseRunner(self, iteration, PhaseHooks(self.emit, self.limits))
        pool = await self._pool_before(iteration)
        rng = iteration_rng(self.seed, iteration, "pool")
        parent = select_parent(pareto_front(pool), rng)
        self.current_policies = parent.policies
        self.emit("on_iteration_start", iteration, self)
        with self._exploring(settings.explore_temperature):
            episodes = await phases.timed("generate", self._explore(phases, iteration, parent))
        self._check_failures(iteration, "episodes", [t.metadata.get("error") for t in episodes])
        credit = self._credit(episodes)
        proposals = await phases.timed(
            "update", self._propose(phases, pool, parent, credit, episodes, rng)
        )
        children = await phases.timed(
            "validate", self._score_all(phases, iteration, pool, proposals)
        )
        self._check_failures(
            iteration, "validations", [c.reason if c.score is None else None for c in children]
        )
        self.pool_log.add(children)
        self._record_decisions(iteration, pool, children)
        everyone = [*pool, *children]
        best = best_candidate(everyone) or pool[0]
        if (
            best.id == 0
            and iteration + 1 - self.config.start_iteration >= self.config.num_iterations
        ):
            self.logger.warning("no candidate scored above the starting policies; keeping them")
        usage = UsageLedger.since(before, self.ledger.by_role())
        updates = self._updates(iteration, best)
        stats = iteration_stats(iteration, "pool", episodes, {}, {}, updates, usage)
        stats.update(self._pool_stats(everyone, parent, children, best, credit))
        self.finish_iteration(iteration, phases, updates, stats, started)
        if settings.max_rollouts is not None and self._rollouts() >= settings.max_rollouts:
            self.stop(f"rollout budget of {settings.max_rollouts} episodes spent")
        return stats

    async def _pool_before(self, iteration: int) -> list[Candidate]:
        """The pool as it stood before ``iteration``; the starting candidate is scored
        first when the pool is empty."""
        pool = self.pool_log.load(before=iteration)
        if pool:
            return pool
        start = self.config.start_iteration
        policies = self.checkpoint.get_policies(start)
        scored = await self._validator().score(policies, start)
        initial = from_score(0, start, "initial", [], policies, scored, [], "the starting policies")
        if initial.score is None:
            raise RunFailedError(
                f"the starting policies could not be scored on the validation batch: {scored.error}"
            )
        self.pool_log.add([initial])
        return [initial]

    def _validator(self) -> Any:
        if self.validator is None:  # the config forbids it; a hand-built trainer may not
            raise ConfigError("search='pool' needs validate_updates=true (candidates are scored)")
        return self.validator

    @contextlib.contextmanager
    def _exploring(self, temperature: float) -> Iterator[None]:
        if not isinstance(self.env, Exploring):
            self._say_once(
                "temperature",
                f"{type(self.env).__name__} cannot switch between sampling and greedy "
                "answers: exploration and validation both use the actor's temperature",
            )
            yield
            return
        with self.env.exploring(temperature):
            yield

    async def _explore(
        self, phases: PhaseRunner, iteration: int, parent: Candidate
    ) -> list[Trajectory]:
        """The round's exploration episodes: ``samples_per_task`` per task, each with its own
        seed, so a resumed round replays the same samples (stored ones are reused)."""
        settings, count = self.config.pool, int(self.config.trajectories_per_iteration)
        per_task = min(settings.samples_per_task, count)
        tasks = self._exploration_tasks(iteration, -(-count // per_task))
        base = iteration_rng(self.seed, iteration, "samples").randrange(2**31)
        repeated = [task for task in tasks for _ in range(per_task)][:count]
        planned = [{**task, "sample_seed": base + n} for n, task in enumerate(repeated)]
        return await phases.generate(parent.policies, planned)

    def _exploration_tasks(self, iteration: int, count: int) -> list[dict[str, Any]]:
        """``count`` training tasks outside the validation batch (it may repeat them when the
        training split has no others)."""
        rng = iteration_rng(self.seed, iteration, "tasks")
        held = {task_key(t) for t in self._validator().tasks}
        drawn = self.env.sample_tasks(count * 4, split="train", rng=rng)
        picked: list[dict[str, Any]] = []
        for task in drawn:
            if task_key(task) not in held and task not in picked:
                picked.append(task)
        if len(picked) < count:
            self._say_once(
                "overlap",
                "too few training tasks outside the validation batch: exploration repeats tasks",
            )
            picked += drawn[: count - len(picked)]
        return picked[:count]

    def _credit(self, episodes: list[Trajectory]) -> Credit:
        scorer = self.env.score_outputs if isinstance(self.env, ScoresOutputs) else None
        credit = assign_credit(episodes, self.agent_ids, scorer)
        if credit.source == "team":
            self._say_once(
                "credit",
                "the environment reports no per-agent reward parts and "
                "cannot score combinations: each answer gets its team's reward",
            )
        return credit

    async def _propose(
        self,
        phases: PhaseRunner,
        pool: list[Candidate],
        parent: Candidate,
        credit: Credit,
        episodes: list[Trajectory],
        rng: Any,
    ) -> list[Proposal]:
        settings = self.config.pool
        proposals: list[Proposal] = []
        front = pareto_front(pool)
        if settings.merge and len(front) >= 2:
            pair = merge_pair(front, rng)
            if pair is not None:
                proposals.append(merge_child(*pair, *merge_policies(*pair)))
        if settings.rewrites:
            proposals += await self._rewrites(phases, parent, episodes)
        room = max(0, settings.children - len(proposals))
        proposals += demonstration_children(parent, self.agent_ids, credit, settings, room, rng)
        known = [c.policies for c in pool]
        return [p for p in proposals if p.policies not in known]

    async def _rewrites(
        self, phases: PhaseRunner, parent: Candidate, episodes: list[Trajectory]
    ) -> list[Proposal]:
        """Rewrites of the parent's instructions from the critic's language gradients on
        the round's episodes."""
        _, gradients = await phases.evaluate(parent.policies, episodes)
        updates = await phases.update(parent.policies, gradients)
        proposals = []
        for agent_id, candidates in updates.items():
            for update in candidates:
                if update.method != "kept" and update.new_policy != parent.policies[agent_id]:
                    policies = {**parent.policies, agent_id: update.new_policy}
                    proposals.append(
                        Proposal(
                            "rewrite",
                            [parent.id],
                            policies,
                            [agent_id],
                            f"{agent_id}: {update.method}",
                        )
                    )
        return proposals

    async def _score_all(
        self,
        phases: PhaseRunner,
        iteration: int,
        pool: list[Candidate],
        proposals: list[Proposal],
    ) -> list[Candidate]:
        """Score every proposal on the validation batch, concurrently, and decide."""
        validator = self._validator()
        phases.hooks.emit("on_phase_start", iteration, "validate", len(proposals))
        validator.on_scored = lambda: phases.hooks.emit("on_phase_advance", iteration, "validate")
        scores = await validator.score_all([p.policies for p in proposals], iteration)
        by_id = {c.id: c for c in pool}
        next_id = max(c.id for c in pool) + 1
        children = []
        for offset, (proposal, scored) in enumerate(zip(proposals, scores, strict=True)):
            parent = by_id[proposal.parents[0]]
            candidate = from_score(
                next_id + offset,
                iteration,
                proposal.origin,
                proposal.parents,
                proposal.policies,
                scored,
                proposal.changed,
                proposal.note,
            )
            children.append(gate(candidate, parent))
        phases.validation = {
            "validation_episodes": sum(s.episodes_run for s in scores),
            "accepted_updates": sum(c.accepted for c in children),
            "rejected_updates": sum(not c.accepted for c in children),
        }
        return children

    def _record_decisions(
        self, iteration: int, pool: list[Candidate], children: list[Candidate]
    ) -> None:
        """One ``updates.jsonl`` line per changed agent of every child, and a log line."""
        scores = {c.id: c.score for c in pool}
        decisions = []
        for index, child in enumerate(children):
            for agent_id in child.changed or list(child.policies)[:1]:
                decisions.append(
                    UpdateDecision(
                        iteration=iteration,
                        agent_id=agent_id,
                        candidate=index,
                        kind=cast(Kind, child.origin),
                        policy=child.policies[agent_id],
                        score=child.score,
                        incumbent_score=scores.get(child.parents[0]),
                        accepted=child.accepted,
                        reason=f"candidate {child.id}: {child.reason}",
                    )
                )
            self.logger.info(
                f"iteration {iteration + 1}: candidate {child.id} ({child.note}) "
                f"{'accepted' if child.accepted else 'rejected'}: {child.reason}"
            )
        self.decisions.record(decisions)

    def _updates(self, iteration: int, best: Candidate) -> list[PolicyUpdate]:
        """The checkpoint's update records: each agent's policy of the best candidate, and
        how it differs from the previous checkpoint's (``kept`` when it does not)."""
        previous = self.checkpoint.get_policies(iteration)
        method = cast(Kind, "rewrite" if best.origin == "initial" else best.origin)
        return [
            PolicyUpdate(
                agent_id=agent_id,
                method=method if policy != previous.get(agent_id) else "kept",
                new_policy=policy,
                aggregated_gradient="",
                error=None if policy != previous.get(agent_id) else "unchanged",
            )
            for agent_id, policy in best.policies.items()
        ]

    @staticmethod
    def _pool_stats(
        everyone: list[Candidate],
        parent: Candidate,
        children: list[Candidate],
        best: Candidate,
        credit: Credit,
    ) -> dict[str, Any]:
        """What a round adds to the usual iteration statistics."""
        return {
            "parent": parent.id,
            "best_candidate": best.id,
            "validation_score": best.score,
            "pool_size": sum(c.accepted for c in everyone),
            "front": [c.id for c in pareto_front(everyone)],
            "candidate_scores": {str(c.id): c.score for c in children},
            "credit": credit.source,
        }

    def _rollouts(self) -> int:
        """Episodes played so far (exploration + validation) by the finished rounds."""
        metrics = self.checkpoint.all_stats()
        return sum(
            int(m.get("num_episodes", 0)) + int(m.get("validation_episodes", 0)) for m in metrics
        )
