"""Weight-space PARL: GRPO on the orchestrator's plans, sub-agents frozen.

:class:`OrchestratorGRPO` is a :class:`~langmarl.magrpo.base.WeightSpaceTrainer` with one
agent, the orchestrator, so it runs the same loop as MAGRPO, IAC and MAAC (task order,
per-step seeding, metrics lines, checkpoints, resume, trackers) and overrides only the
loop's hooks (:data:`~langmarl.magrpo.base.HOOKS`). One step:

1. the loop tells the reward the step (:class:`~langmarl.envs.parallel.reward.TraceScorer`,
   the step-aware PARL reward: λ1, λ2 annealed over ``anneal_steps``);
2. for each of the step's ``tasks_per_step`` tasks (a seeded shuffle per epoch), the
   orchestrator samples ``num_generations`` plans;
3. every plan is executed by the frozen sub-agents (an ``LLMClient``, all plans'
   sub-agents concurrently) and the environment joins their answers;
4. each execution trace gets its PARL reward; advantages are group-relative per task; the
   masked policy-gradient loss updates the orchestrator (all its weights, or LoRA adapters
   with ``config.lora``), through MAGRPO's update (:mod:`langmarl.magrpo.update`).

With ``grpo.placement: "ray"`` the orchestrator (model, optimizer, sampler) is one Ray actor,
a MAGRPO agent's (:mod:`langmarl.magrpo.placement`): steps 2 and 4 are its ``generate`` and
``update`` calls (token ids and advantages cross, never the model), while this process keeps
the rest: the sub-agents, the episodes, rewards, advantages, the run directory, checkpoints
(the actor writes its folder into the run directory) and resume. Both placements sample from
a generator seeded from the step's random state, so on one seed they sample the same plans.

``output_dir`` is a run of the run contract (:mod:`langmarl.store.run`, kind
``parl_grpo``): ``run.json`` with a truthful status, per step the means of the PARL terms,
the loss and the wall time as a line of ``metrics.jsonl``, per episode the terms, critical
and serial steps and the plan in ``parl_curves.json``, and every ``save_steps`` a checkpoint
(:mod:`langmarl.magrpo.checkpoint`, the newest kept) that ``train(resume_from="latest")``
continues from: the steps after it are trained again, and their lines and episodes dropped.
Steps are numbered from 1 everywhere, as in every weight-space run (the first metrics line,
curve point and checkpoint are step 1; the λ schedule still starts at its initial values
there). The config is recorded in ``run.json`` only (no ``config.json``), and there is no
``eval.jsonl``: PARL GRPO has no held-out evaluation. Runs and checkpoints of the earlier
layouts (:mod:`langmarl.parl.grpo_checkpoint`: steps from 0, ``metrics.json``, ``model/``
checkpoints) still resume.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langmarl.core.aio import run_sync
from langmarl.core.errors import ConfigError
from langmarl.core.files import load_json_file
from langmarl.envs.parallel import prompts
from langmarl.envs.parallel.reward import TraceScorer
from langmarl.envs.parallel.runner import execute_plan
from langmarl.envs.parallel.tasks import ParallelTask
from langmarl.envs.parallel.trace import ExecutionTrace
from langmarl.llm.local.weights import save_pretrained_quietly
from langmarl.magrpo.base import WeightSpaceTrainer
from langmarl.parl import grpo_checkpoint as legacy
from langmarl.parl.curves import CURVES_FILE, curves_document, episode_row
from langmarl.parl.grpo_config import OrchestratorGRPOConfig
from langmarl.store import kinds

if TYPE_CHECKING:
    from langmarl.envs.parallel.env import ParallelTasksEnv

log = logging.getLogger(__name__)

__all__ = ["OrchestratorGRPO", "OrchestratorGRPOConfig"]


def plan_prompt(task_text: str, policy: str = prompts.ORCHESTRATOR_POLICY) -> str:
    """The orchestrator's planning prompt (policy and request in one user turn)."""
    return f"{policy}\n\n{prompts.PLAN_REQUEST.format(task=task_text)}"


class OrchestratorGRPO(WeightSpaceTrainer):
    """GRPO on the orchestrator of a :class:`ParallelTasksEnv`; sub-agents frozen.

    Args:
        env: The environment: its training tasks, episode settings and sub-agent client
            (its ``subagent_llm``, else its ``llm`` under role ``subagent``).
        config: Training settings (its λ fields give the reward's schedule).
        model, tokenizer: The orchestrator (default: loaded from ``config.model``).

    Attributes:
        scorer: The step-aware PARL reward the loop tells the step (``reward_func``).

    ``train()`` returns the metrics lines of the steps it trained; :attr:`metrics` holds
    every line of the run, those before a resume included.
    """

    algorithm = "parl_grpo"
    ray_placement = True
    resume_hint = kinds.get("parl_grpo").resume_hint
    held_out_evaluation = False
    """Held-out plans need the sub-agents and the PARL reward, which the base class's
    joint-sample evaluation does not run: read ``parl_curves.json``, or evaluate the saved
    ``model/`` with ``langmarl parl train`` on the eval tasks."""
    """``run.json`` holds the config; no reader needs a copy."""

    def __init__(
        self,
        env: ParallelTasksEnv,
        config: OrchestratorGRPOConfig | None = None,
        *,
        model: Any = None,
        tokenizer: Any = None,
    ) -> None:
        import torch

        self.env, self.config = env, config or OrchestratorGRPOConfig()
        c = self.config
        self.tasks: list[ParallelTask] = list(env.tasks["train"])
        self.scorer = TraceScorer(env.settings.max_subagents, reward_kwargs=c.reward_kwargs())
        torch.manual_seed(c.seed)  # LoRA adapters start from the seed
        loaded = model is not None and tokenizer is not None
        args = c.trainer_config(len(self.tasks))
        super().__init__(
            [model if loaded else c.model],
            self.scorer,
            args.model_copy(update={"save_total_limit": 1}),  # full-model checkpoints are large
            formatters=[lambda example: plan_prompt(example["prompt"])],
            tokenizers=[tokenizer] if loaded else None,
            train_dataset=[{"prompt": t.prompt, "task": i} for i, t in enumerate(self.tasks)],
        )

    @property
    def metrics(self) -> list[dict[str, Any]]:
        """Every metrics line of the run (``metrics.jsonl``), those before a resume included."""
        return self.run.metrics()

    @property
    def model(self) -> Any:
        """The orchestrator (a peft model with ``lora``); None with ``placement="ray"``,
        where it lives in its actor."""
        return self.agents[0].model

    @property
    def tokenizer(self) -> Any:
        """Its tokenizer (None with ``placement="ray"``)."""
        return self.agents[0].tokenizer

    @property
    def trainable(self) -> list[Any]:
        """The parameters GRPO updates (the adapters with ``lora``); in process only."""
        return self.agents[0].trainable_parameters()

    def prompt_for(self, task: ParallelTask, policy: str = prompts.ORCHESTRATOR_POLICY) -> str:
        """The orchestrator's planning prompt for ``task``."""
        return plan_prompt(task.prompt, policy)

    async def _execute(self, tasks: list[ParallelTask], plans: list[str]) -> list[ExecutionTrace]:
        subagents = self.env.subagent_client()
        return list(
            await asyncio.gather(
                *(
                    execute_plan(task, plan, subagent_llm=subagents, settings=self.env.settings)
                    for task, plan in zip(tasks, plans, strict=True)
                )
            )
        )

    def training_step(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        """One GRPO step on the tasks of ``examples``; returns the step's curve point, loss
        and seconds."""
        import time

        import torch

        from langmarl.magrpo.advantages import group_advantages
        from langmarl.magrpo.update import PolicyBatch

        c, g, agent = self.config, self.config.num_generations, self.agents[0]
        started = time.monotonic()
        tasks = [self.tasks[example["task"]] for example in examples]
        batch = self._sample([agent.formatter(example) for example in examples])
        traces = run_sync(self._execute([t for t in tasks for _ in range(g)], batch.texts))
        terms = self.scorer(traces)
        rewards = torch.tensor([row["total_reward"] for row in terms])
        advantages = group_advantages(
            rewards.view(len(tasks), g), "mean", normalize=c.normalize_advantages
        ).flatten()
        stats = self._update(PolicyBatch(batch, advantages, group=g))
        self.skipped_nonfinite += int(stats.skipped_nonfinite)
        return self._record(traces, terms, stats.loss, time.monotonic() - started)

    def _sample(self, prompts: list[str]) -> Any:
        """``num_generations`` plans per prompt from the orchestrator, drawn by a generator
        seeded from the step's random state: the same plans in process and in its Ray actor
        (:func:`~langmarl.magrpo.placement.engine.sample`, what the actor runs)."""
        import torch

        from langmarl.magrpo.placement.engine import sample

        agent, g = self.agents[0], self.config.num_generations
        seed = int(torch.randint(0, 2**62, (1,)))
        if agent.worker is not None:  # placement="ray"
            return agent.worker.generate(prompts, g, False, seed).result()
        return sample(agent, prompts, g, False, seed, self.args)

    def _update(self, part: Any) -> Any:
        """The masked policy-gradient step on ``part`` (a ``PolicyBatch``), clipped, as
        MAGRPO's agents take it: here, or in the orchestrator's actor; its ``UpdateStats``."""
        from langmarl.magrpo.update import accumulate_policy_gradients, apply_gradients

        agent = self.agents[0]
        if agent.worker is not None:  # placement="ray"
            return agent.worker.update([part]).result()
        stats = accumulate_policy_gradients(agent, [part], self.args)
        apply_gradients(agent, self.args, stats)
        return stats

    def _record(
        self, traces: list[ExecutionTrace], terms: list[dict[str, Any]], loss: float, seconds: float
    ) -> dict[str, Any]:
        """Add the step's episodes to the curves and return its point (the loop adds the
        ``step``). Episodes the file holds of this step or later came from an attempt killed
        after its last checkpoint: these steps are trained again, so they are dropped."""
        step = self.step + 1  # the loop numbers the step being trained from 1
        rows = [row for row in self._episodes() if int(row["step"]) < step]
        for trace, term in zip(traces, terms, strict=True):
            meta = {"task_id": trace.task_id, **trace.summary(), "parl": term}
            rows.append({**episode_row(step, meta), "plan": trace.plan_text})
        document = curves_document(rows)
        self.run.write_json(CURVES_FILE, document)  # plan texts: through the redactor
        point = {key: value for key, value in document["curve"][-1].items() if key != "step"}
        return {**point, "loss": loss, "seconds": round(seconds, 3)}

    def _episodes(self) -> list[dict[str, Any]]:
        """The episode rows of ``parl_curves.json`` (none before the first step)."""
        path = self.run.file(CURVES_FILE)
        return list(load_json_file(path).get("episodes", [])) if path.is_file() else []

    # -- the loop's hooks (langmarl.magrpo.base.HOOKS) ------------------------------------
    def after_step(self, metrics: dict[str, Any]) -> None:
        """Log the step."""
        log.info(
            "GRPO step %d: reward %.3f (r_perf %.3f), sub-agents %.2f, critical %.2f vs serial "
            "%.2f, loss %.4f, %.1f s",
            metrics["step"], metrics["total_reward"], metrics["r_perf"],
            metrics["num_subagents"], metrics["critical_steps"], metrics["serial_steps"],
            metrics["loss"], metrics["seconds"],
        )  # fmt: skip

    def after_training(self) -> None:
        """Save the model when ``save_model``."""
        if self.config.save_model:
            self.save()

    def holds_run(self) -> bool:
        """A run with checkpoints, metrics or curves (runs from before checkpoints have only
        the latter)."""
        return super().holds_run() or self.run.file(CURVES_FILE).is_file()

    def checkpoint_due(self) -> bool:
        """As the loop's, except ``save_steps=None`` means no checkpoints at all."""
        return self.config.save_steps is not None and super().checkpoint_due()

    def restore_checkpoint(self, path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
        """Also read checkpoints of the earlier ``model/`` layout; a run that numbered its
        steps from 0 is renumbered first (:func:`.grpo_checkpoint.renumber_from_zero`), so
        the resume rewinds its lines as any other run's."""
        legacy.renumber_from_zero(self.run)
        if not legacy.is_legacy_checkpoint(path):
            return super().restore_checkpoint(path)
        if self.placement is not None:
            raise ConfigError(
                f"checkpoint {str(path)!r} has the earlier layout (model/), which resumes in "
                "process only: resume it with grpo.placement='process'; its next checkpoints "
                "resume on Ray"
            )
        step = legacy.load_legacy_checkpoint(path, self.agents[0])
        log.info("read %s (the earlier checkpoint layout)", path)
        return {"algorithm": self.algorithm, "step": step}, {}

    def config_record(self) -> dict[str, Any]:
        """The :class:`OrchestratorGRPOConfig` (``run.json``'s ``config``)."""
        return self.config.model_dump(mode="json")

    # -- beyond the loop -----------------------------------------------------------------
    def save(self, path: str | Path | None = None) -> Path:
        """Save the orchestrator (``save_pretrained``: the adapter only with ``lora``) to
        ``path`` (default ``<output_dir>/model``); returns the folder."""
        folder = Path(path) if path is not None else self.run_dir / "model"
        agent = self.agents[0]
        if agent.worker is not None:  # placement="ray": the actor writes it (shared storage)
            agent.worker.save(folder, False).result()
        else:
            save_pretrained_quietly(self.model, self.tokenizer, folder)
        return folder
