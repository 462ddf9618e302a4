"""The five phases of one training iteration (see :mod:`langmarl.trainer.monte_carlo`).

The phases get what they need explicitly: the trainer's public parts (:class:`PhaseHost`)
and a :class:`PhaseHooks` (how to call the callbacks, and the worker limits), so this module
does not depend on the trainer class (:mod:`langmarl.trainer.phase_host`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

from langmarl.core.errors import LLMError
from langmarl.core.records import SHARED, Evaluation, Gradient, Policies, PolicyUpdate, Trajectory
from langmarl.textgrad.formatter import format_task
from langmarl.trainer.decisions import Selection, unvalidated_decisions
from langmarl.trainer.phase_host import PhaseHooks, PhaseHost
from langmarl.trainer.stats import iteration_rng, mini_batch
from langmarl.trainer.validation import Validator

log = logging.getLogger(__name__)
T = TypeVar("T")


class PhaseRunner:
    """Runs the phases of iteration ``iteration`` for ``trainer``, calling back through
    ``hooks``.

    Attributes:
        reused: Episodes taken from an interrupted earlier attempt of this iteration.
        seconds: Wall time per phase (``validate`` is the validation part of ``update``).
        validation: ``accepted_updates``, ``rejected_updates``, ``validation_score`` and
            ``validation_episodes`` of the update phase, for the iteration's stats.
    """

    def __init__(self, trainer: PhaseHost, iteration: int, hooks: PhaseHooks) -> None:
        self.t = trainer
        self.hooks = hooks
        self.iteration = iteration
        self.reused = 0
        self.seconds: dict[str, float] = {}
        self.validation: dict[str, Any] = {}

    async def timed(self, name: str, work: Awaitable[T]) -> T:
        """Await ``work``, recording its wall time in ``seconds[name]``."""
        started = time.perf_counter()
        result = await work
        self.seconds[name] = round(time.perf_counter() - started, 3)
        return result

    def _phase(self, name: str, total: int) -> None:
        self.hooks.emit("on_phase_start", self.iteration, name, total)

    def _advance(self, name: str) -> Any:
        return lambda: self.hooks.emit("on_phase_advance", self.iteration, name)

    # 1 ----------------------------------------------------------------------------------------
    async def load(self) -> Policies:
        """Phase 1: the policies of checkpoint ``iteration``."""
        self._phase("load", 1)
        policies = self.t.checkpoint.get_policies(self.iteration)
        self._advance("load")()
        return policies

    # 2 ----------------------------------------------------------------------------------------
    async def generate(
        self, policies: Policies, tasks: list[dict[str, Any]] | None = None
    ) -> list[Trajectory]:
        """Phase 2: one episode per task, concurrently (bounded by the episode worker limit);
        ``tasks`` default to ``trajectories_per_iteration`` training tasks drawn for this
        iteration. Episodes an interrupted attempt stored are reused."""
        t = self.t
        if tasks is None:
            count = int(t.config.trajectories_per_iteration)
            rng = iteration_rng(t.seed, self.iteration, "tasks")
            tasks = t.env.sample_tasks(count, split="train", rng=rng)
        count = len(tasks)
        self._phase("generate", count)

        async def episode(episode_id: int) -> Trajectory:
            stored = t.trajectories.load_one(self.iteration, episode_id)
            if stored is not None and stored.metadata.get("error"):
                stored = None  # a failed episode is tried again on resume
            if stored is not None:
                self.reused += 1
            else:
                stored = await t.collect(policies, tasks[episode_id])
                t.trajectories.save(self.iteration, episode_id, stored)
            t.logger.episode_saved(self.iteration, episode_id, stored.reward)
            self.hooks.emit("on_episode_complete", stored, t)
            return stored

        jobs = [episode(i) for i in range(count)]
        return await t.bounded(self.hooks.limits.episodes, jobs, self._advance("generate"))

    # 3 ----------------------------------------------------------------------------------------
    async def evaluate(
        self, policies: Policies, trajectories: list[Trajectory]
    ) -> tuple[dict[int, Evaluation], dict[int, list[Gradient]]]:
        """Phase 3: critic evaluations and gradients of the mini-batch's episodes. Each
        episode's gradients start as soon as its evaluation is back."""
        t = self.t
        usable = [i for i, traj in enumerate(trajectories) if not traj.metadata.get("error")]
        rng = iteration_rng(t.seed, self.iteration, "mini_batch")
        batch = mini_batch(usable, t.config.mini_batch_size, rng)
        self._phase("evaluate", len(batch))
        evaluations: dict[int, Evaluation] = {}
        gradients: dict[int, list[Gradient]] = {}
        gradient_slots = asyncio.Semaphore(self.hooks.limits.optimizer)

        async def one(episode_id: int) -> None:
            traj = trajectories[episode_id]
            evaluation = await self._evaluation(episode_id, traj, policies)
            evaluations[episode_id] = evaluation
            if not evaluation.error:
                gradients[episode_id] = await self._gradients(
                    episode_id, traj, evaluation, policies, gradient_slots
                )

        jobs = [one(i) for i in batch]
        await t.bounded(self.hooks.limits.evaluations, jobs, self._advance("evaluate"))
        return dict(sorted(evaluations.items())), dict(sorted(gradients.items()))

    async def _evaluation(
        self, episode_id: int, traj: Trajectory, policies: Policies
    ) -> Evaluation:
        t = self.t
        evaluation = t.reusable_evaluation(self.iteration, episode_id)
        if evaluation is None:
            evaluation = await t.critic.aevaluate(
                traj, policies, t.env.describe(), t.env.agent_roles()
            )
            t.store.save_evaluation(t.run_id, self.iteration, episode_id, evaluation.to_dict())
        if evaluation.error:
            t.logger.error(f"critic failed on episode {episode_id}: {evaluation.error}")
        elif evaluation.parse_status == "fallback":
            t.logger.warning(f"episode {episode_id}: critic reply had no per-agent credit")
        t.logger.evaluation_done(
            self.iteration, episode_id, evaluation.paradigm, evaluation.raw_response
        )
        return evaluation

    async def _gradients(
        self,
        episode_id: int,
        traj: Trajectory,
        evaluation: Evaluation,
        policies: Policies,
        slots: Any,
    ) -> list[Gradient]:
        t = self.t
        stored = t.reusable_gradients(self.iteration, episode_id)
        if stored is not None:
            return stored
        context = format_task(traj.task)
        shared = evaluation.paradigm == "central_global"
        targets = [SHARED] if shared else [a for a in t.agent_ids if a in evaluation.per_agent]

        async def make(agent_id: str) -> Gradient:
            async with slots:
                try:
                    if agent_id == SHARED:
                        text = await t.optimizer.agenerate_shared_gradient(
                            evaluation.raw_response, context
                        )
                    else:
                        text = await t.optimizer.agenerate_gradient(
                            policies[agent_id], evaluation.per_agent[agent_id], context, agent_id
                        )
                except LLMError as exc:
                    t.logger.error(f"gradient for {agent_id} (episode {episode_id}) failed: {exc}")
                    return Gradient(
                        agent_id=agent_id,
                        iteration=self.iteration,
                        episode_id=episode_id,
                        error=str(exc),
                    )
            return Gradient(
                agent_id=agent_id, text=text, iteration=self.iteration, episode_id=episode_id
            )

        made = list(await asyncio.gather(*(make(a) for a in targets)))
        record = {g.agent_id: g.to_dict() for g in made}
        t.store.save_gradients(t.run_id, self.iteration, episode_id, record)
        return made

    # 4 ----------------------------------------------------------------------------------------
    async def update(
        self, policies: Policies, gradients: dict[int, list[Gradient]]
    ) -> dict[str, list[PolicyUpdate]]:
        """Phase 4: aggregate each agent's gradients and propose ``update_candidates``
        candidate policies per agent, every call concurrent (a failing optimizer proposes
        the agent's previous policy, method ``kept``). The candidates are saved, so a
        resumed iteration decides on the same ones."""
        t = self.t
        count = t.config.update_candidates
        self._phase("update", len(t.agent_ids) * count)
        proposals = self._stored_candidates()
        if proposals is None:
            aggregated = await self._aggregate_all(gradients)
            proposals = await self._propose(policies, aggregated, count)
            records = {a: [u.to_dict() for u in us] for a, us in proposals.items()}
            t.store.save_candidates(t.run_id, self.iteration, records)
        return proposals

    async def select(
        self, policies: Policies, proposals: dict[str, list[PolicyUpdate]]
    ) -> list[PolicyUpdate]:
        """Phase 4b (``validate``): with ``validate_updates``, keep a candidate only if it
        validates (:mod:`langmarl.trainer.validation`); else keep every first candidate.
        Every decision is recorded in ``updates.jsonl``."""
        t = self.t
        validator = t.validator
        if validator is None:
            updates = [proposals[a][0] for a in t.agent_ids]
            decisions = unvalidated_decisions(self.iteration, updates)
            self.validation = {"validation_score": None, "validation_episodes": 0}
        else:
            selection = await self._validate(validator, policies, proposals)
            updates, decisions = selection.updates, selection.decisions
            self.validation = {
                "validation_score": selection.score,
                "validation_episodes": selection.episodes_run,
            }
        t.decisions.record(decisions)
        self.validation["accepted_updates"] = sum(1 for d in decisions if d.accepted)
        self.validation["rejected_updates"] = sum(
            1 for d in decisions if not d.accepted and d.score is not None
        )
        for u in updates:
            if u.new_policy != policies[u.agent_id]:
                self.hooks.emit("on_policy_update", u.agent_id, policies[u.agent_id], u.new_policy)
        return updates

    def _stored_candidates(self) -> dict[str, list[PolicyUpdate]] | None:
        """Candidates an interrupted attempt of this iteration proposed, so a resumed
        iteration decides on the same candidates."""
        t = self.t
        data = t.store.load_candidates(t.run_id, self.iteration)
        if not data or sorted(data) != sorted(t.agent_ids):
            return None
        stored = {a: [PolicyUpdate.from_dict(u) for u in data[a]] for a in t.agent_ids}
        if any(u.error and u.method == "kept" for us in stored.values() for u in us):
            return None  # a failed proposal is tried again on resume
        return stored

    async def _aggregate_all(self, gradients: dict[int, list[Gradient]]) -> dict[str, str]:
        t = self.t
        texts: dict[str, list[str]] = {agent_id: [] for agent_id in t.agent_ids}
        for episode_gradients in gradients.values():
            for g in episode_gradients:
                for agent_id in t.agent_ids if g.agent_id == SHARED else [g.agent_id]:
                    if g.text and agent_id in texts:
                        texts[agent_id].append(g.text)
        for agent_id, items in texts.items():
            t.logger.gradient_saved(self.iteration, agent_id, len(items))
        shared = any(g.agent_id == SHARED for gs in gradients.values() for g in gs)
        aggregated = await self._aggregate(texts, shared)
        t.store.save_aggregated(t.run_id, self.iteration, aggregated)
        return aggregated

    async def _propose(
        self, policies: Policies, aggregated: dict[str, str], count: int
    ) -> dict[str, list[PolicyUpdate]]:
        """``count`` candidate updates per agent, every call concurrent."""
        t = self.t
        jobs = [
            self._update_one(a, policies[a], aggregated[a])
            for a in t.agent_ids
            for _ in range(count)
        ]
        made = await t.bounded(self.hooks.limits.optimizer, jobs, self._advance("update"))
        return {a: made[i * count : (i + 1) * count] for i, a in enumerate(t.agent_ids)}

    async def _validate(
        self, validator: Validator, policies: Policies, proposals: dict[str, list[PolicyUpdate]]
    ) -> Selection:
        t = self.t
        teams = 1 + sum(len(c) for c in proposals.values())
        self._phase("validate", teams)
        validator.on_scored = self._advance("validate")
        selection = await validator.select(self.iteration, policies, proposals)
        for d in selection.decisions:
            if d.score is not None:
                verdict = "accepted" if d.accepted else "rejected"
                t.logger.info(
                    f"iteration {self.iteration + 1}: {d.agent_id} candidate {d.candidate} "
                    f"{verdict}: {d.reason}"
                )
        return selection

    async def _aggregate(self, texts: dict[str, list[str]], shared: bool) -> dict[str, str]:
        t = self.t
        if shared:  # central_global: one aggregation serves every agent
            merged = await self._safe_aggregate(texts[t.agent_ids[0]], "team")
            return {agent_id: merged for agent_id in t.agent_ids}
        jobs = [self._safe_aggregate(texts[a], a) for a in t.agent_ids]
        merged_all = await t.bounded(self.hooks.limits.optimizer, jobs, lambda: None)
        return dict(zip(t.agent_ids, merged_all, strict=True))

    async def _safe_aggregate(self, texts: list[str], name: str) -> str:
        try:
            return await self.t.optimizer.aaggregate(texts, name)
        except Exception as exc:  # fault boundary: any optimizer bug degrades to a join
            self.t.logger.error(f"aggregating gradients for {name} failed: {exc}")
            return self.t.optimizer.aggregate_gradients(texts)

    async def _update_one(self, agent_id: str, policy: str, gradient: str) -> PolicyUpdate:
        t = self.t
        try:
            update = await t.optimizer.aupdate_policy(policy, gradient, agent_id)
        except Exception as exc:  # fault boundary: an optimizer failure keeps the policy
            t.logger.error(f"updating the policy of {agent_id} failed, keeping it: {exc}")
            return PolicyUpdate(
                agent_id=agent_id,
                method="kept",
                new_policy=policy,
                aggregated_gradient=gradient,
                error=str(exc),
            )
        update.agent_id = agent_id
        if update.error:
            t.logger.warning(f"policy update of {agent_id} used {update.method}: {update.error}")
        return update

    # 5 ----------------------------------------------------------------------------------------
    def checkpoint(self, updates: list[PolicyUpdate], stats: dict[str, Any]) -> None:
        """Phase 5: save the new policies with the stats as checkpoint ``iteration + 1``."""
        self._phase("checkpoint", 1)
        new = {u.agent_id: u.new_policy for u in updates}
        records = [u.to_dict() for u in updates]
        self.t.checkpoint.save_policies(self.iteration + 1, new, stats, records)
        self._advance("checkpoint")()
