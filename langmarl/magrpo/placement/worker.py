"""The body of one agent's Ray actor: its model, optimizer and sampler, behind four coarse
methods whose arguments and answers are plain data (token ids, masks, texts, advantages,
statistics, paths); no model ever crosses after the actor is built.

The actor builds its agent with :func:`~langmarl.magrpo.policy.build_agents` (a model name
loads on the actor's node; a loaded model is shipped once, pickled, when the actor starts)
and then runs the same functions the in-process trainer runs: :func:`generate` for
sampling, :func:`accumulate_policy_gradients` and :func:`apply_gradients` for the update,
:func:`save_agent` / :func:`load_agent` for checkpoints. So an agent on Ray computes what it
would in process; only where the call runs differs.

With ``rollout_placement="apart"`` the agent samples in a rollout actor of its own
(:mod:`.engine`); this actor then pushes its trained weights there after every update and
every checkpoint it loads (:meth:`AgentWorker.attach_rollout`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langmarl.magrpo.checkpoint import load_agent, save_agent
from langmarl.magrpo.config import TrainerConfig
from langmarl.magrpo.generation import GenerationBatch
from langmarl.magrpo.placement.engine import BusyClock, moved, sample
from langmarl.magrpo.placement.weights import trained_weights
from langmarl.magrpo.policy import build_agents
from langmarl.magrpo.update import (
    PolicyBatch,
    UpdateStats,
    accumulate_policy_gradients,
    apply_gradients,
)


def actor_device(config: TrainerConfig, index: int) -> str:
    """Where agent ``index`` trains inside its actor: ``agent_devices`` when given, else
    ``cuda`` when the actor reserves GPUs (Ray shows it only its own), else ``cpu``."""
    if config.agent_devices:
        return config.agent_devices[index]
    return "cuda" if config.agent_num_gpus > 0 else "cpu"


class AgentWorker(BusyClock):
    """One agent in its own process (wrapped with ``ray.remote`` by the driver).

    Args:
        index: The agent's position (its name is ``agent-<index>``).
        source: A model name/path, or a loaded causal LM.
        tokenizer: The tokenizer of a loaded model (None for a name).
        config: The trainer config (the whole run's; this actor uses its own agent's part).
    """

    def __init__(self, index: int, source: Any, tokenizer: Any, config: TrainerConfig) -> None:
        import torch

        threads = config.num_threads or max(1, int(config.agent_num_cpus))
        torch.set_num_threads(threads)  # the CPUs the actor reserved, not the node's
        device = actor_device(config, index)
        own = config.model_copy(update={"num_agents": 1, "agent_devices": [device]})
        tokenizers = None if isinstance(source, str) else [tokenizer]
        (self.agent,) = build_agents([source], own, None, tokenizers, first=index)
        self.config = config
        self.busy = {}  # seconds spent computing per method: generate, update, sync (BusyClock)
        self.critics: list[Any] = []  # IAC/MAAC critics living here (add_critic)
        self.rollout: Any = None  # the rollout actor's handle (rollout_placement="apart")

    def describe(self) -> dict[str, Any]:
        """Process id, node and device: for the driver's logs, and for tests that kill it."""
        import ray

        return {
            "pid": os.getpid(),
            "node_id": ray.get_runtime_context().get_node_id(),
            "device": self.agent.device,
            "uses_lora": self.agent.uses_lora,
            "update_precision": self.agent.update_precision,
        }

    def generate(
        self, prompts: Sequence[str], num_generations: int, greedy: bool, seed: int
    ) -> GenerationBatch:
        """Sample ``num_generations`` completions per prompt, as the in-process rollout does
        (:func:`~langmarl.magrpo.placement.engine.sample`); tensors come back on the CPU."""
        started = time.perf_counter()
        batch = sample(self.agent, prompts, num_generations, greedy, seed, self.config)
        self._count("generate", started)
        return batch

    def update(self, parts: Sequence[PolicyBatch]) -> UpdateStats:
        """One policy-gradient step from the driver's batches and advantages."""
        started, agent = time.perf_counter(), self.agent
        placed = [
            PolicyBatch(moved(p.batch, agent.device), p.advantages.to(agent.device), p.group)
            for p in parts
        ]
        stats = accumulate_policy_gradients(agent, placed, self.config)
        apply_gradients(agent, self.config, stats)
        self._count("update", started)
        if self.rollout is not None:
            stats.synced_bytes = self.publish()
        return stats

    def save(self, folder: str, optimizer: bool) -> None:
        """Write the agent into ``folder`` (a path the driver named, in the run directory)."""
        save_agent(self.agent, Path(folder), optimizer)

    def load(self, folder: str, optimizer: bool, checkpoint_name: str) -> None:
        """Load the agent from ``folder`` (weights; the optimizer state if ``optimizer``)."""
        load_agent(self.agent, Path(folder), optimizer, checkpoint_name)
        if self.rollout is not None:
            self.publish()

    # -- rollout_placement="apart": the weights pushed to the rollout actor (engine.py) ------
    def attach_rollout(self, rollout: Any) -> int:
        """Sample in ``rollout`` (a :class:`~.engine.RolloutWorker` actor's handle) from now
        on: push it the weights now and after every update; return the bytes pushed."""
        self.rollout = rollout
        return self.publish()

    def publish(self) -> int:
        """Put the trained weights (:func:`.weights.trained_weights`) into Ray's object store
        and wait until the rollout actor has loaded them; return their bytes."""
        import ray

        started = time.perf_counter()
        weights = ray.put(trained_weights(self.agent.model))
        loaded = int(ray.get(self.rollout.load_weights.remote(weights)))
        self._count("sync", started)
        return loaded

    # -- IAC/MAAC: critics living beside the agent (langmarl.magrpo.critic) -----------------
    def add_critic(self, own_copy: bool, learning_rate: float) -> int:
        """Build a critic on this agent's model (on a copy of it with ``own_copy``), as the
        in-process trainer would; return its number for the ``critic_*`` calls."""
        import copy

        from langmarl.magrpo.critic import Critic

        agent = self.agent
        backbone = copy.deepcopy(agent.model) if own_copy else agent.model
        self.critics.append(Critic(backbone, agent.tokenizer, learning_rate, own_copy))
        return len(self.critics) - 1

    def critic_score(self, number: int, texts: Sequence[str], max_length: int) -> list[float]:
        return self.critics[number].score(texts, max_length)

    def critic_estimate(self, number: int, texts: Sequence[str], max_length: int) -> list[float]:
        return self.critics[number].estimate(texts, max_length)

    def critic_fit(
        self, number: int, targets: Sequence[float], coef: float, clip: float | None
    ) -> float:
        return self.critics[number].fit(targets, coef, clip)

    def critic_step(self, number: int) -> None:
        self.critics[number].step()

    def critic_state(self, number: int, optimizer: bool = True) -> dict[str, Any]:
        """The critic's state dict (its optimizer's if ``optimizer``), on the CPU (it goes
        into the driver's ``extra.pt``)."""
        from langmarl.magrpo.critic import on_cpu

        return dict(on_cpu(self.critics[number].state_dict(optimizer)))

    def critic_load(self, number: int, state: dict[str, Any]) -> None:
        self.critics[number].load_state_dict(state)
