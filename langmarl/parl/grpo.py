"""Weight-space PARL: GRPO on the orchestrator's plans, sub-agents frozen.

One step: for each of ``tasks_per_step`` tasks, the orchestrator model samples
``num_generations`` plans; every plan is executed by the frozen sub-agents (an
``LLMClient``, all plans' sub-agents concurrently) and the environment joins their answers;
each execution trace gets its PARL reward at this step (λ annealed over ``anneal_steps``);
advantages are group-relative per task; the masked policy-gradient loss updates the
orchestrator (all its weights, or LoRA adapters with ``config.lora``).

``output_dir`` is a run of the run contract (:mod:`langmarl.store.run`, kind
``parl_grpo``): ``run.json`` with a truthful status, per step the means of the PARL terms,
the loss and the wall time as a line of ``metrics.jsonl`` (also the list ``metrics.json``),
per episode the terms, critical and serial steps and the plan in ``parl_curves.json``, and
every ``save_steps`` a checkpoint (:mod:`langmarl.parl.grpo_checkpoint`) that
``train(resume_from="latest")`` continues from: the steps after it are trained again, and
their lines dropped.

Built on the pure functions of ``langmarl.magrpo`` (sampling, log-probabilities,
group advantages, the policy-gradient loss): with one agent, MAGRPO is GRPO.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langmarl.core.errors import ConfigError
from langmarl.core.files import load_json_file
from langmarl.core.secrets import Redactor, environment_secrets
from langmarl.envs.parallel import prompts
from langmarl.envs.parallel.runner import execute_plan
from langmarl.envs.parallel.tasks import ParallelTask
from langmarl.envs.parallel.trace import ExecutionTrace
from langmarl.llm.client import run_sync
from langmarl.parl import grpo_checkpoint as ckpt
from langmarl.parl.curves import CURVES_FILE, curves_document, episode_row
from langmarl.parl.grpo_config import OrchestratorGRPOConfig
from langmarl.store.run import METRICS_FILE, RunDir

if TYPE_CHECKING:
    from langmarl.envs.parallel.env import ParallelTasksEnv

log = logging.getLogger(__name__)
LEGACY_METRICS_FILE = "metrics.json"
RESUME_HINT = "continue it with `langmarl parl grpo --resume latest` (same config)"


class OrchestratorGRPO:
    """GRPO on the orchestrator of a :class:`ParallelTasksEnv`; sub-agents frozen.

    Args:
        env: The environment: its tasks, episode settings and sub-agent client (its
            ``subagent_llm``, else its ``llm`` under role ``subagent``).
        config: Training settings.
        model, tokenizer: The orchestrator (default: loaded from ``config.model``).
    """

    def __init__(
        self,
        env: ParallelTasksEnv,
        config: OrchestratorGRPOConfig | None = None,
        *,
        model: Any = None,
        tokenizer: Any = None,
    ) -> None:
        import torch

        from langmarl.magrpo.config import TrainerConfig
        from langmarl.magrpo.policy import apply_lora, load_causal_lm
        from langmarl.rewards.parl import PARLReward

        self.env, self.config = env, config or OrchestratorGRPOConfig()
        c = self.config
        if c.num_threads:
            torch.set_num_threads(c.num_threads)
        torch.manual_seed(c.seed)
        if model is None or tokenizer is None:
            model, tokenizer = load_causal_lm(c.model)
        if c.lora is not None:
            model = apply_lora(model, c.lora)
        self.model, self.tokenizer = model, tokenizer
        self.trainable = [p for p in self.model.parameters() if p.requires_grad]
        self.sampling = TrainerConfig(
            num_agents=1, max_new_tokens=c.max_new_tokens, temperature=c.temperature,
            top_p=c.top_p, seed=c.seed,
        )  # fmt: skip
        self.optimizer = torch.optim.AdamW(self.trainable, lr=c.learning_rate)
        self.reward_fn = PARLReward(
            c.lambda1_init, c.lambda1_final, c.lambda2_init, c.lambda2_final,
            total_training_steps=c.anneal_steps or c.num_steps,
        )  # fmt: skip
        self.rng = random.Random(c.seed)
        self.rows: list[dict[str, Any]] = []
        self.metrics: list[dict[str, Any]] = []
        self.completed_steps = 0
        self.run = RunDir(c.output_dir, Redactor(environment_secrets()), RESUME_HINT)

    def prompt_for(self, task: ParallelTask, policy: str = prompts.ORCHESTRATOR_POLICY) -> str:
        """The orchestrator's planning prompt (policy and request in one user turn)."""
        return f"{policy}\n\n{prompts.PLAN_REQUEST.format(task=task.prompt)}"

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

    def step(self, step: int) -> dict[str, Any]:
        """One GRPO step; returns its metrics (also appended to ``self.metrics``)."""
        import torch

        from langmarl.envs.parallel.reward import score_traces
        from langmarl.magrpo.advantages import group_advantages
        from langmarl.magrpo.generation import completion_logprobs, generate
        from langmarl.magrpo.loss import policy_gradient_loss

        c, g = self.config, self.config.num_generations
        started = time.monotonic()
        tasks = self.rng.choices(self.env.tasks["train"], k=c.tasks_per_step)
        batch = generate(self.model, self.tokenizer, [self.prompt_for(t) for t in tasks], g,
                         self.sampling)  # fmt: skip
        episode_tasks = [task for task in tasks for _ in range(g)]
        traces = run_sync(self._execute(episode_tasks, batch.texts))
        terms = score_traces(traces, self.reward_fn, step, self.env.settings.max_subagents)
        rewards = torch.tensor([row["total_reward"] for row in terms])
        advantages = group_advantages(
            rewards.view(len(tasks), g), "mean", normalize=c.normalize_advantages
        ).flatten()
        self.model.train()
        logprobs = completion_logprobs(
            self.model, batch.sequences, batch.attention_mask, batch.prompt_length
        )
        loss = policy_gradient_loss(logprobs, advantages, batch.completion_mask.float())
        self.optimizer.zero_grad()
        loss.backward()
        if c.max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(self.trainable, c.max_grad_norm)
        self.optimizer.step()
        seconds = time.monotonic() - started
        return self._record(step, traces, terms, float(loss.detach()), seconds)

    def _record(
        self,
        step: int,
        traces: list[ExecutionTrace],
        terms: list[dict[str, Any]],
        loss: float,
        seconds: float,
    ) -> dict[str, Any]:
        for trace, term in zip(traces, terms, strict=True):
            meta = {"task_id": trace.task_id, **trace.summary(), "parl": term}
            self.rows.append({**episode_row(step, meta), "plan": trace.plan_text})
        document = curves_document(self.rows)
        point = {**document["curve"][-1], "loss": loss, "seconds": round(seconds, 3)}
        self.metrics.append(point)
        self.run.write_json(CURVES_FILE, document)  # plan texts: through the redactor
        self.run.append(METRICS_FILE, point)
        self.run.write_json(LEGACY_METRICS_FILE, self.metrics)
        log.info(
            "GRPO step %d: reward %.3f (r_perf %.3f), sub-agents %.2f, critical %.2f vs serial "
            "%.2f, loss %.4f, %.1f s",
            step, point["total_reward"], point["r_perf"], point["num_subagents"],
            point["critical_steps"], point["serial_steps"], loss, seconds,
        )  # fmt: skip
        return point

    def save(self, path: str | Path | None = None) -> Path:
        """Save the orchestrator (``save_pretrained``: the adapter only with ``lora``) to
        ``path`` (default ``<output_dir>/model``); returns the folder."""
        folder = Path(path) if path is not None else Path(self.config.output_dir) / "model"
        self.model.save_pretrained(folder)
        self.tokenizer.save_pretrained(folder)
        return folder

    def train(self, resume_from: str | Path | None = None) -> list[dict[str, Any]]:
        """Run the steps up to ``num_steps`` (checkpointing every ``save_steps``; saving the
        model after if ``save_model``); returns the metrics of each.

        Args:
            resume_from: ``"latest"`` or a ``checkpoints/step-*`` directory to continue from.

        Raises:
            ConfigError: when starting afresh in an ``output_dir`` that holds a run.
        """
        c = self.config
        if resume_from is not None:
            self.resume(resume_from)
        elif (
            self.run.metrics()
            or ckpt.latest_checkpoint(self.run.path) is not None
            or self.run.file(CURVES_FILE).is_file()  # a run from before checkpoints
        ):
            raise ConfigError(
                f"output_dir {c.output_dir!r} already holds a run: continue it with "
                "--resume latest, or start a new one elsewhere (--set grpo.output_dir=...)"
            )
        self.run.start("parl_grpo", config=c.model_dump(mode="json"), total_steps=c.num_steps)
        self.run.rewind(self.completed_steps - 1)  # metrics' step counts from 0
        with self.run.tracking(), self.run.reporting(c.report_to, c.model_dump(mode="json")):
            for step in range(self.completed_steps, c.num_steps):
                self.step(step)
                self.completed_steps = step + 1
                last = step + 1 == c.num_steps
                if c.save_steps and (last or (step + 1) % c.save_steps == 0):
                    self.save_checkpoint()
            if c.save_model:
                self.save()
        return self.metrics

    def save_checkpoint(self) -> Path | None:
        """Checkpoint the state after ``completed_steps`` (nothing when ``save_steps`` is
        ``None``)."""
        if not self.config.save_steps:
            return None
        path = ckpt.save_checkpoint(self.run.path, self.completed_steps, self.model,
                                    self.tokenizer, self.optimizer, self.rng)  # fmt: skip
        self.run.update(step=self.completed_steps, checkpoint=path.name)
        self.run.event("checkpoint", step=self.completed_steps, path=path.name)
        return path

    def resume(self, resume_from: str | Path) -> None:
        """Restore a checkpoint, and the curves and metrics of the steps it holds."""
        path = ckpt.resolve_checkpoint(self.run.path, resume_from)
        done = ckpt.load_checkpoint(path, self.model, self.optimizer, self.rng)
        curves = self.run.file(CURVES_FILE)
        document = load_json_file(curves) if curves.is_file() else {}
        self.rows = [r for r in document.get("episodes", []) if int(r["step"]) < done]
        self.metrics = [m for m in self.run.metrics() if int(m["step"]) < done]
        self.completed_steps = done
        log.info("resumed GRPO from %s after %d steps", path, done)
