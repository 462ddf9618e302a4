"""``rollout_placement="apart"``: each agent samples in a rollout actor of its own, apart from
the actor that trains it, and gets the trained weights after every update through Ray's
object store.

The shape is that of the systems that train LLMs with RL on Ray: vLLM's RLHF example keeps
the trainer on one GPU and a generation engine in a placement group on others, pushing the
weights after each update; MARTI and OpenRLHF give each agent (policy) its own rollout
engines as Ray actors. Here, per agent::

    driver                          agent actor (worker.py)           rollout actor (RolloutWorker)
    start: both actors placed   →   attach_rollout(its handle):
                                      ray.put(trained weights)   →    load_weights
    rollout turn: prompts, seed ─────────────────────────────────→    engine.generate
                                ←──────────────────────────────────   ids, masks, texts
    update: batches, advantages →   update, then
                                      ray.put(trained weights)   →    load_weights
                                ←   UpdateStats (+ synced_bytes)      (done before the answer)
    resume: checkpoint folder   →   load, then ray.put(weights)  →    load_weights

The trained weights are the model's trainable parameters (:mod:`.weights`): the LoRA
adapters with LoRA, every weight for full fine-tuning. The agent's actor puts them into the
object store itself and hands the rollout actor the reference, so the bytes go from the
agent's node to the rollout's node and never through the driver. The update answers only
once the rollout actor has loaded them, and the driver sends the next ``generate`` only after
that answer, so every rollout samples the policy the last update left (on-policy, as in
process). The driver sees none of this but the byte count (``<agent>/synced_mb``).

Engines (:data:`ENGINES`, the small table ``rollout_engine`` names): ``"embedded"``
(:class:`EmbeddedEngine`: the model built as the agent's, sampled with langmarl's decoding
and its ``sampling_precision`` copy, so a run with the rollout apart samples the texts the
in-process run samples, tested) and ``"vllm"`` (:mod:`.vllm_engine`, for a GPU; not run here).
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from langmarl.magrpo.config import TrainerConfig
from langmarl.magrpo.generation import GenerationBatch, generate
from langmarl.magrpo.placement.weights import load_trained_weights
from langmarl.magrpo.policy import Agent, build_agents

if TYPE_CHECKING:
    import torch


class RolloutEngine(Protocol):
    """What samples one agent's rollouts in its rollout actor.

    Built with ``(index, source, tokenizer, config, device)``: the agent's position, its model
    name/path or loaded model (as the agent's actor gets it), the tokenizer of a loaded model
    (None for a name), the run's config and the device the actor reserved.
    """

    def generate(
        self, prompts: Sequence[str], num_generations: int, greedy: bool, seed: int
    ) -> GenerationBatch:
        """``num_generations`` completions per prompt (row ``p * G + g``), tensors on the
        CPU, in :func:`~langmarl.magrpo.generation.generate`'s layout (the update scores
        them with the trained model's tokenizer). ``seed`` seeds this call's draws."""
        ...

    def load_weights(self, weights: Mapping[str, torch.Tensor]) -> int:
        """Make the engine sample from the trained weights (:func:`.weights.trained_weights`
        of the agent's model); return the bytes loaded. Raises ``ConfigError`` when the
        names do not match the engine's model."""
        ...


ENGINES: dict[str, str] = {
    "embedded": "langmarl.magrpo.placement.engine:EmbeddedEngine",
    "vllm": "langmarl.magrpo.placement.vllm_engine:VLLMEngine",
}
"""``rollout_engine`` → the :class:`RolloutEngine` class (imported when a run asks for it)."""


def engine_class(name: str) -> Any:
    """The engine class ``rollout_engine`` names (the config's ``Literal`` checked the name)."""
    module, _, attribute = ENGINES[name].partition(":")
    return getattr(importlib.import_module(module), attribute)


def sample(
    agent: Agent,
    prompts: Sequence[str],
    num_generations: int,
    greedy: bool,
    seed: int,
    config: TrainerConfig,
) -> GenerationBatch:
    """What the in-process rollout does for one agent: its own generator seeded with
    ``seed``, greedy decoding from the trained model, sampling from the sampler's copy;
    tensors moved to the CPU (the answer of an actor)."""
    import torch

    model = agent.model if greedy else agent.sampler.model_for(agent.model)
    generator = torch.Generator(device=agent.device).manual_seed(int(seed))
    batch = generate(model, agent.tokenizer, prompts, num_generations, config,
                     greedy=greedy, generator=generator)  # fmt: skip
    return moved(batch, "cpu")


def moved(batch: GenerationBatch, device: str) -> GenerationBatch:
    """``batch`` with its tensors on ``device``."""
    return GenerationBatch(
        batch.sequences.to(device),
        batch.attention_mask.to(device),
        batch.prompt_length,
        batch.completion_mask.to(device),
        list(batch.texts),
    )


class EmbeddedEngine:
    """langmarl's own sampling on a model built as the agent's (same source, same LoRA seed,
    no optimizer state, no reference model), kept in step by :meth:`load_weights`."""

    def __init__(
        self, index: int, source: Any, tokenizer: Any, config: TrainerConfig, device: str
    ) -> None:
        own = config.model_copy(update={"num_agents": 1, "agent_devices": [device], "beta": 0.0})
        tokenizers = None if isinstance(source, str) else [tokenizer]
        (self.agent,) = build_agents([source], own, None, tokenizers, first=index)
        self.config = config

    def generate(
        self, prompts: Sequence[str], num_generations: int, greedy: bool, seed: int
    ) -> GenerationBatch:
        return sample(self.agent, prompts, num_generations, greedy, seed, self.config)

    def load_weights(self, weights: Mapping[str, torch.Tensor]) -> int:
        loaded = load_trained_weights(self.agent.model, weights)
        self.agent.sampler.weights_changed()  # its sampling copy refreshes at the next call
        return loaded


class BusyClock:
    """Seconds an actor spent computing, per method, since the driver last asked: a call's
    wall time on the driver minus these is transfer, serialisation and waiting
    (``benchmarks/weights_on_ray.py``). Shared by the agent's and the rollout's actors."""

    busy: dict[str, float]

    def timings(self) -> dict[str, float]:
        """Seconds spent per method since the last call (then reset)."""
        busy, self.busy = self.busy, {}
        return busy

    def _count(self, method: str, started: float) -> None:
        self.busy[method] = self.busy.get(method, 0.0) + time.perf_counter() - started


class RolloutWorker(BusyClock):
    """One agent's rollout actor (wrapped with ``ray.remote`` by the driver): its engine,
    and the seconds and bytes it handled (for the driver's logs and the benchmark).

    Args:
        index: The agent's position (its rollout actor is ``agent-<index>``'s).
        source: A model name/path, or a loaded causal LM.
        tokenizer: The tokenizer of a loaded model (None for a name).
        config: The trainer config (``rollout_engine``, ``rollout_num_cpus``/``_gpus``).
    """

    def __init__(self, index: int, source: Any, tokenizer: Any, config: TrainerConfig) -> None:
        import torch

        threads = config.num_threads or max(1, int(config.rollout_num_cpus))
        torch.set_num_threads(threads)  # the CPUs the actor reserved, not the node's
        self.device = "cuda" if config.rollout_num_gpus > 0 else "cpu"
        engine = engine_class(config.rollout_engine)
        self.engine: RolloutEngine = engine(index, source, tokenizer, config, self.device)
        self.busy = {}
        self.loaded_bytes = 0

    def describe(self) -> dict[str, Any]:
        """Process id, node and device (as :meth:`AgentWorker.describe`)."""
        import ray

        return {"pid": os.getpid(), "node_id": ray.get_runtime_context().get_node_id(),
                "device": self.device}  # fmt: skip

    def generate(
        self, prompts: Sequence[str], num_generations: int, greedy: bool, seed: int
    ) -> GenerationBatch:
        started = time.perf_counter()
        batch = self.engine.generate(prompts, num_generations, greedy, seed)
        self._count("generate", started)
        return batch

    def load_weights(self, weights: Mapping[str, torch.Tensor]) -> int:
        """Load the trained weights the agent's actor put into the object store (Ray hands
        them over resolved); return their bytes."""
        started = time.perf_counter()
        loaded = self.engine.load_weights(weights)
        self._count("load_weights", started)
        self.loaded_bytes += loaded
        return loaded
