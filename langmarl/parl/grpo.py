"""Weight-space PARL: GRPO on the orchestrator's plans, sub-agents frozen.

One step: for each of ``tasks_per_step`` tasks, the orchestrator model samples
``num_generations`` plans; every plan is executed by the frozen sub-agents (an
``LLMClient``, all plans' sub-agents concurrently) and the environment joins their answers;
each execution trace gets its PARL reward at this step (λ annealed over ``anneal_steps``);
advantages are group-relative per task; the masked policy-gradient loss updates the
orchestrator. Per episode, critical and serial steps are recorded in
``<output_dir>/parl_curves.json``.

Built on the pure functions of ``langmarl.magrpo`` (sampling, log-probabilities,
group advantages, the policy-gradient loss): with one agent, MAGRPO is GRPO.
"""

from __future__ import annotations

import asyncio
import logging
import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from langmarl.core.files import atomic_write_json
from langmarl.envs.parallel import prompts
from langmarl.envs.parallel.runner import execute_plan
from langmarl.envs.parallel.tasks import ParallelTask
from langmarl.envs.parallel.trace import ExecutionTrace
from langmarl.llm.client import run_sync
from langmarl.parl.curves import CURVES_FILE, curves_document, episode_row

if TYPE_CHECKING:
    from langmarl.envs.parallel.env import ParallelTasksEnv

log = logging.getLogger(__name__)


class OrchestratorGRPOConfig(BaseModel):
    """GRPO on the orchestrator (weight space)."""

    model_config = ConfigDict(extra="forbid")

    model: str = "smollm2"
    """The orchestrator's causal LM (``smollm2``: the embedded model) or a local path."""
    num_steps: int = Field(default=4, ge=1)
    """Training steps."""
    tasks_per_step: int = Field(default=1, ge=1)
    """Tasks (groups) per step."""
    num_generations: int = Field(default=4, ge=2)
    """Plans sampled per task (the group size G)."""
    max_new_tokens: int = Field(default=64, ge=1)
    """Length limit of a plan."""
    temperature: float = Field(default=0.9, gt=0.0)
    """Sampling temperature of plans."""
    top_p: float = Field(default=0.95, gt=0.0, le=1.0)
    """Nucleus sampling mass."""
    learning_rate: float = Field(default=1e-5, gt=0.0)
    """AdamW learning rate."""
    max_grad_norm: float | None = Field(default=1.0, gt=0.0)
    """Gradient clipping (``None``: off)."""
    normalize_advantages: bool = True
    """Divide group advantages by the group's standard deviation."""
    lambda1_init: float = 0.1
    """Initial weight of ``r_parallel``."""
    lambda1_final: float = 0.0
    """Final weight of ``r_parallel``."""
    lambda2_init: float = 0.1
    """Initial weight of ``r_finish``."""
    lambda2_final: float = 0.0
    """Final weight of ``r_finish``."""
    anneal_steps: int | None = Field(default=None, ge=1)
    """Steps over which λ anneals (``None``: ``num_steps``)."""
    output_dir: str = "runs/parl_grpo"
    """Where ``parl_curves.json`` and ``metrics.json`` are written."""
    num_threads: int | None = Field(default=None, ge=1)
    """``torch.set_num_threads`` for the run (``None``: leave it)."""
    seed: int = 0
    """Seed of task order and sampling."""
    save_model: bool = False
    """Save the trained orchestrator (model + tokenizer) to ``<output_dir>/model`` at the end."""


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
        from langmarl.magrpo.policy import load_causal_lm
        from langmarl.rewards.parl import PARLReward

        self.env, self.config = env, config or OrchestratorGRPOConfig()
        c = self.config
        if c.num_threads:
            torch.set_num_threads(c.num_threads)
        torch.manual_seed(c.seed)
        if model is None or tokenizer is None:
            model, tokenizer = load_causal_lm(c.model)
        self.model, self.tokenizer = model, tokenizer
        self.sampling = TrainerConfig(
            num_agents=1, max_new_tokens=c.max_new_tokens, temperature=c.temperature,
            top_p=c.top_p, seed=c.seed,
        )  # fmt: skip
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=c.learning_rate)
        self.reward_fn = PARLReward(
            c.lambda1_init, c.lambda1_final, c.lambda2_init, c.lambda2_final,
            total_training_steps=c.anneal_steps or c.num_steps,
        )  # fmt: skip
        self.rng = random.Random(c.seed)
        self.rows: list[dict[str, Any]] = []
        self.metrics: list[dict[str, Any]] = []

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
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), c.max_grad_norm)
        self.optimizer.step()
        return self._record(step, traces, terms, float(loss.detach()))

    def _record(
        self, step: int, traces: list[ExecutionTrace], terms: list[dict[str, Any]], loss: float
    ) -> dict[str, Any]:
        for trace, term in zip(traces, terms, strict=True):
            meta = {"task_id": trace.task_id, **trace.summary(), "parl": term}
            self.rows.append(episode_row(step, meta))
        document = curves_document(self.rows)
        point = {**document["curve"][-1], "loss": loss}
        self.metrics.append(point)
        out = Path(self.config.output_dir)
        atomic_write_json(out / CURVES_FILE, document)
        atomic_write_json(out / "metrics.json", self.metrics)
        log.info(
            "GRPO step %d: reward %.3f, critical %.2f vs serial %.2f, loss %.4f",
            step, point["total_reward"], point["critical_steps"], point["serial_steps"], loss,
        )  # fmt: skip
        return point

    def save(self, path: str | Path | None = None) -> Path:
        """Save the orchestrator (``save_pretrained``) to ``path`` (default
        ``<output_dir>/model``); returns the folder."""
        folder = Path(path) if path is not None else Path(self.config.output_dir) / "model"
        self.model.save_pretrained(folder)
        self.tokenizer.save_pretrained(folder)
        return folder

    def train(self) -> list[dict[str, Any]]:
        """Run ``num_steps`` steps (saving the model after if ``save_model``); returns the
        metrics of each."""
        for step in range(self.config.num_steps):
            self.step(step)
        if self.config.save_model:
            self.save()
        return self.metrics
