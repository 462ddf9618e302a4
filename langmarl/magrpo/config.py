"""Configuration of the weight-space trainers (MAGRPO, IAC, MAAC).

Every default lives here, documented once under its field; the CLI, the API and the docs read
them from these classes.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from langmarl.config.runs_root import DEFAULT_RUNS_DIR
from langmarl.core.errors import ConfigError, MissingDependencyError
from langmarl.tracking.factory import ReportTo

JointMode = Literal["align", "cross"]
AdvantageMode = Literal["mean", "raw", "max", "rloo"]
LossReduction = Literal["token", "sequence"]
CriticType = Literal["v", "q"]
SamplingPrecision = Literal["auto", "fp32", "bf16", "w16", "int8"]
UpdatePrecision = Literal["auto", "fp32", "bf16"]
Placement = Literal["process", "ray"]
PlacementStrategy = Literal["PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD"]
RolloutPlacement = Literal["with_agent", "apart"]
RolloutEngine = Literal["embedded", "vllm"]


def installed(module: str) -> bool:
    """Whether ``import <module>`` would find it (without importing it: ray takes ~1 s)."""
    if module in sys.modules:
        return sys.modules[module] is not None
    return importlib.util.find_spec(module) is not None


def ray_installed() -> bool:
    """Whether ``import ray`` would find the package."""
    return installed("ray")


class LoRAConfig(BaseModel):
    """Low-rank adapters (peft) instead of full fine-tuning."""

    model_config = ConfigDict(extra="forbid")

    r: int = Field(default=16, ge=1)
    """Rank of the adapter matrices."""
    alpha: int = Field(default=32, ge=1)
    """Scaling numerator (the update is scaled by alpha / r)."""
    dropout: float = Field(default=0.0, ge=0.0, lt=1.0)
    """Dropout on the adapter input."""
    target_modules: list[str] = Field(default_factory=lambda: ["q_proj", "v_proj"])
    """Names of the linear layers that get adapters."""


class TrainerConfig(BaseModel):
    """Settings shared by MAGRPO, IAC and MAAC: generation, optimization, runs on disk."""

    model_config = ConfigDict(extra="forbid")

    output_dir: str = f"{DEFAULT_RUNS_DIR}/magrpo"
    """Run directory: metrics.jsonl, checkpoints/, eval results. A run file sets it with
    the top-level ``runs_dir``/``run_id`` (:class:`langmarl.magrpo.run.RunConfig`), not in
    its ``trainer`` section."""
    num_agents: int = Field(default=2, ge=1)
    """Number of agents N (1 is plain GRPO)."""
    num_turns: int = Field(default=1, ge=1)
    """Turns T per episode; turns after the first get prompts from the external feedback."""
    discount: float = Field(default=0.9, ge=0.0, le=1.0)
    """Discount applied to values of later turns."""
    max_new_tokens: int = Field(default=64, ge=1)
    """Maximum completion length per agent per turn."""
    max_prompt_tokens: int = Field(default=512, ge=8)
    """Prompts are truncated from the left to this many tokens."""
    temperature: float = Field(default=0.8, gt=0.0)
    """Sampling temperature during rollouts."""
    top_p: float = Field(default=0.95, gt=0.0, le=1.0)
    """Nucleus sampling mass during rollouts."""
    top_k: int | None = Field(default=None, ge=1)
    """Top-k sampling during rollouts (None: off)."""
    use_chat_template: bool = True
    """Wrap each formatted prompt in the tokenizer's chat template (if it has one)."""
    learning_rate: float = Field(default=1e-5, gt=0.0)
    """AdamW learning rate (per agent optimizer)."""
    weight_decay: float = Field(default=0.0, ge=0.0)
    """AdamW weight decay."""
    max_grad_norm: float | None = Field(default=1.0, gt=0.0)
    """Gradient clipping per agent (None: off)."""
    beta: float = Field(default=0.0, ge=0.0)
    """Weight of the KL penalty to the initial (reference) policy; 0 skips the reference model."""
    loss_reduction: LossReduction = "token"
    """'token': average over every completion token of the batch; 'sequence': per completion."""
    micro_batch_size: int = Field(default=4, ge=1)
    """Sequences per forward/backward pass (gradients accumulate across micro-batches)."""
    per_device_train_batch_size: int = Field(default=1, ge=1)
    """Dataset examples (tree roots) per training step."""
    num_train_epochs: int = Field(default=1, ge=1)
    """Passes over the training set."""
    max_steps: int | None = Field(default=None, ge=1)
    """Stop after this many steps (None: run all epochs)."""
    lora: LoRAConfig | None = None
    """Train LoRA adapters instead of all weights (needs peft: pip install 'langmarl[weights]')."""
    agent_devices: list[str] | None = None
    """Device per agent, e.g. ["cuda:0", "cuda:1"] or ["cpu", "cpu"] (None: all on cpu)."""
    external_prompt_passthrough: bool = False
    """Use prompts returned by the external feedback as-is instead of re-running the formatter."""
    logging_steps: int = Field(default=1, ge=1)
    """Write a metrics line every this many steps."""
    report_to: ReportTo = Field(default_factory=list)
    """Experiment trackers fed from the run's ``metrics.jsonl`` while it trains:
    ``"tensorboard"``, ``"mlflow"``, ``"wandb"``, ``"trackio"``, a list of them, ``"all"``
    (every installed one) or ``"none"`` (the default); each needs its extra, e.g.
    ``pip install 'langmarl[tensorboard]'``. Local trackers write inside the run directory."""
    save_steps: int | None = Field(default=None, ge=1)
    """Save a checkpoint every this many steps (None: only at the end)."""
    save_total_limit: int | None = Field(default=None, ge=1)
    """Keep only the newest this many checkpoints, deleting older ones as new ones are
    written (None: keep all)."""
    save_optimizer: bool = False
    """Also save each agent's optimizer state (``optimizer.pt``, AdamW: twice the weights).
    Off, a resumed run restarts its optimizer (moments from zero) and logs so; on, it
    continues exactly as an uninterrupted run would."""
    eval_interval: int | None = Field(default=None, ge=1)
    """Evaluate on the held-out set every this many steps (None: only when asked)."""
    eval_num_samples: int = Field(default=4, ge=1)
    """Held-out examples per evaluation."""
    num_threads: int | None = Field(default=None, ge=1)
    """torch threads for the run (None: ``$LANGMARL_TORCH_THREADS``, else the cores free at
    each step, :mod:`langmarl.core.cpu`)."""
    sampling_precision: SamplingPrecision = "auto"
    """Precision of the model rollouts sample from: ``"fp32"`` (the trained model itself),
    ``"bf16"``, ``"w16"`` (fp16 weights, fp32 arithmetic) or ``"int8"`` (a copy refreshed
    from the trained weights after each update; faster decoding on CPU, slightly different
    sampling numerics; the update and greedy evaluation always use the fp32 model). See
    :mod:`langmarl.magrpo.sampler`. ``"auto"`` (the default) is ``"w16"`` with LoRA and
    ``"bf16"`` for full fine-tuning, each the fastest there with a held-out reward within the
    seeds' noise of fp32's (benchmarks/RESULTS.md, issue 25: a 10-seed A/B of the quickstart;
    int8 lost 0.08); ``"fp32"`` instead of bf16 on a CPU without native bf16 (AVX512-BF16
    or AMX), where bf16 is emulated and slower than fp32 (issue 37). On a GPU ``"auto"`` is
    ``"fp32"``, and ``"w16"``/``"int8"`` (CPU kernels) are refused."""
    update_precision: UpdatePrecision = "auto"
    """Arithmetic of the update's forward and backward passes: ``"fp32"``, or ``"bf16"``
    (mixed precision: ``torch.autocast`` runs the matrix products in bf16 while the weights,
    their gradients, the optimizer and the log-softmax stay fp32). ``"auto"`` (the default) is
    ``"bf16"`` on a CPU that multiplies bf16 natively (AVX512-BF16 or AMX, torch on its
    AVX-512 kernels), else ``"fp32"`` (emulated bf16 is slower than fp32; CUDA stays fp32
    unless asked). See benchmarks/RESULTS.md, issue 37: the forward and backward of
    SmolLM2-135M took about half the time in bf16, with held-out rewards compared over seeds."""
    parallel_agents: bool | None = None
    """Sample the agents' rollouts at once, on threads that split torch's cores between them
    (None: on when there are several agents and several torch threads). Each agent samples
    from its own seeded generator, so on or off gives the same texts at equal thread counts."""
    parallel_updates: bool = False
    """With ``parallel_agents``, also run the agents' updates at once. Off by default: it was
    only 7-10 % faster (2 agents, 2 cores) while every agent's gradients and activations are
    alive together (+0.9 GB peak at T=1, +1.5 GB at T=2, benchmarks/RESULTS.md); off, each
    update runs alone on all threads."""
    seed: int = 0
    """Seed for sampling and data order (a run file sets it with its top-level ``seed``)."""
    placement: Placement = "process"
    """Where the agents live: ``"process"`` (the default: in this process) or ``"ray"``: each
    agent (its model, optimizer and sampler) is a Ray actor, the driver keeps the rollout
    trees, rewards, advantages, the run directory and resume (MAGRPO, IAC and MAAC, whose
    critics live in the actors too; PARL GRPO names the same fields in its ``grpo`` section;
    needs ``pip install 'langmarl[ray]'``; :mod:`langmarl.magrpo.placement`)."""
    ray_address: str | None = None
    """With ``placement="ray"``: the cluster to join (``"host:port"`` of its head, or
    ``"auto"``); None starts a local Ray for the run (unless this process already joined
    one). A multi-machine run needs ``output_dir`` on storage every node shares."""
    agent_num_cpus: float = Field(default=1.0, gt=0.0)
    """With ``placement="ray"``: CPUs each agent's actor reserves (its torch threads)."""
    agent_num_gpus: float = Field(default=0.0, ge=0.0)
    """With ``placement="ray"``: GPUs each agent's actor reserves (> 0: the agent trains on
    ``cuda`` unless ``agent_devices`` says otherwise)."""
    placement_strategy: PlacementStrategy = "PACK"
    """With ``placement="ray"``: how the agents' bundles spread over nodes (Ray's placement
    group strategies): ``"PACK"`` as few nodes as fit, ``"SPREAD"`` over nodes where it can,
    ``"STRICT_PACK"`` one node, ``"STRICT_SPREAD"`` one node per agent."""
    rollout_placement: RolloutPlacement = "with_agent"
    """With ``placement="ray"``: where each agent samples its rollouts. ``"with_agent"`` (the
    default): in its own actor, from the model it trains. ``"apart"``: in a rollout actor of
    its own (its own CPUs/GPUs, another placement group), which gets the agent's trained
    weights (the LoRA adapters, or every weight) through Ray's object store after each
    update (:mod:`langmarl.magrpo.placement.engine`)."""
    rollout_engine: RolloutEngine = "embedded"
    """With ``rollout_placement="apart"``: what samples in the rollout actor: ``"embedded"``
    (the default: langmarl's own decoding, as in process) or ``"vllm"`` (a vLLM engine on a
    GPU; ``pip install 'langmarl[vllm]'``, not run here yet: docs/weight_space.md)."""
    rollout_num_cpus: float = Field(default=1.0, gt=0.0)
    """With ``rollout_placement="apart"``: CPUs each rollout actor reserves."""
    rollout_num_gpus: float = Field(default=0.0, ge=0.0)
    """With ``rollout_placement="apart"``: GPUs each rollout actor reserves (> 0: it samples
    on ``cuda``)."""

    @model_validator(mode="after")
    def _check_devices(self) -> TrainerConfig:
        if self.agent_devices is not None and len(self.agent_devices) != self.num_agents:
            raise ConfigError(
                f"agent_devices has {len(self.agent_devices)} entries but num_agents is "
                f"{self.num_agents}: give one device per agent (e.g. {['cpu'] * self.num_agents})"
            )
        if self.placement == "ray" and not ray_installed():
            raise MissingDependencyError("ray", "ray", "placement='ray'")
        return self

    @model_validator(mode="after")
    def _check_rollout(self) -> TrainerConfig:
        if self.rollout_placement == "apart" and self.placement != "ray":
            raise ConfigError(
                "rollout_placement is 'apart', but the rollout actors are Ray actors and "
                f"placement is {self.placement!r}: set placement='ray', or "
                "rollout_placement='with_agent'"
            )
        if self.rollout_engine == "vllm":
            if self.rollout_placement != "apart":
                raise ConfigError(
                    "rollout_engine is 'vllm', but vLLM runs in a rollout actor of its own: "
                    "set rollout_placement='apart' (and placement='ray'), or "
                    "rollout_engine='embedded'"
                )
            if self.rollout_num_gpus <= 0:
                raise ConfigError(
                    "rollout_engine is 'vllm' with rollout_num_gpus=0, but langmarl's vLLM "
                    "engine is wired for a GPU only: set rollout_num_gpus (e.g. 1), or "
                    "rollout_engine='embedded'"
                )
            if not installed("vllm"):
                raise MissingDependencyError("vllm", "vllm", "rollout_engine='vllm'")
        return self

    def device_of(self, agent: int) -> str:
        """The device agent ``agent`` lives on."""
        return self.agent_devices[agent] if self.agent_devices else "cpu"


class MAGRPOConfig(TrainerConfig):
    """Multi-agent group-relative policy optimization over tree-structured rollouts."""

    num_generations: int = Field(default=4)
    """G: completions per agent at every tree node (must be at least 2)."""
    joint_mode: JointMode = "align"
    """'align': the g-th completions of all agents form G joint actions per node (G^T leaves);
    'cross': the Cartesian product, G^N joint actions per node (G^(N·T) leaves)."""
    advantage_mode: AdvantageMode = "mean"
    """Baseline of the group advantage: value minus group mean ('mean'), the value itself
    ('raw'), minus the group max ('max'), minus the mean of the other members ('rloo')."""
    normalize_advantage: bool = False
    """Divide each group's advantages by their standard deviation."""
    termination_threshold: float | None = None
    """Stop expanding a node when the mean immediate reward of its joint actions exceeds this."""
    max_tree_nodes: int = Field(default=4096, ge=1)
    """Refuse configurations whose full tree has more nodes than this (memory guard)."""

    @model_validator(mode="after")
    def _check_group(self) -> MAGRPOConfig:
        if self.num_generations < 2:
            raise ConfigError(
                f"num_generations is {self.num_generations}, but MAGRPO needs at least 2 "
                "completions per group to compare: set num_generations >= 2 (e.g. 4), or use "
                "IACTrainer/MAACTrainer for one sample per turn"
            )
        from langmarl.magrpo.tree import node_count

        nodes = node_count(self.num_agents, self.num_generations, self.num_turns, self.joint_mode)
        if nodes > self.max_tree_nodes:
            raise ConfigError(
                f"the {self.joint_mode} rollout tree for N={self.num_agents}, "
                f"G={self.num_generations}, T={self.num_turns} has {nodes} nodes "
                f"(max_tree_nodes={self.max_tree_nodes}): lower num_generations or num_turns, "
                "use joint_mode='align', set termination_threshold, or raise max_tree_nodes"
            )
        return self


class ActorCriticConfig(TrainerConfig):
    """IAC / MAAC: actors with value-head critics and TD(0) targets across turns."""

    num_generations: int = Field(default=1, ge=1)
    """Completions per agent per turn; must be 1 when num_turns > 1."""
    critic_type: CriticType = "v"
    """'v': the critic scores the prompt (state); 'q': prompt and completion (state-action)."""
    use_separate_critic: bool = False
    """IAC only: give each agent its own critic model instead of a value head on its actor."""
    critic_learning_rate: float = Field(default=1e-5, gt=0.0)
    """Learning rate of separate/centralized critics."""
    value_loss_coef: float = Field(default=0.5, ge=0.0)
    """Weight of the value loss (shared actor-critic models)."""
    normalize_advantage: bool = True
    """Normalize the TD advantages over the batch of each agent."""
    value_clip: float | None = Field(default=None, gt=0.0)
    """Clip the value loss error to this magnitude (None: off)."""
    update_every: Literal["episode", "turn"] = "episode"
    """When critics and actors learn. ``"episode"``: once per step, after the whole episode
    is rolled out. ``"turn"``: online, after every turn: that turn's TD(0) target (reward plus
    γ times the critic's value of the next turn's prompts), one critic and actor update, and
    only then the next turn, sampled from the updated actors. Needs ``critic_type="v"``; the
    edge cases are decided in :mod:`langmarl.magrpo.actor_critic`."""

    @model_validator(mode="after")
    def _check_generations(self) -> ActorCriticConfig:
        if self.num_turns > 1 and self.num_generations != 1:
            raise ConfigError(
                f"num_generations is {self.num_generations} with num_turns={self.num_turns}: "
                "multi-turn IAC/MAAC follows one trajectory per episode, set num_generations=1 "
                "(or use MAGRPO for rollout trees)"
            )
        if self.update_every == "turn" and self.critic_type == "q":
            raise ConfigError(
                "update_every is 'turn' with critic_type='q': a q-critic's TD target needs "
                "the next turn's action, which is sampled only after this turn's update; set "
                "critic_type='v' for online updates, or update_every='episode'"
            )
        return self
