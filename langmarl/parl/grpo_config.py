"""`OrchestratorGRPOConfig`: settings of weight-space PARL (GRPO on the orchestrator's plans),
and `GRPOFile`: a ``langmarl parl grpo`` config file (sections ``env`` and ``grpo``, and the
run's place and seed)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from langmarl.config.runs_root import (
    DEFAULT_RUNS_DIR,
    RunId,
    RunsDir,
    take_section_placement,
)
from langmarl.core.errors import MissingDependencyError
from langmarl.core.validation import config_error
from langmarl.magrpo.config import (
    LoRAConfig,
    Placement,
    PlacementStrategy,
    TrainerConfig,
    ray_installed,
)
from langmarl.tracking.factory import ReportTo


class OrchestratorGRPOConfig(BaseModel):
    """GRPO on the orchestrator (weight space)."""

    model_config = ConfigDict(extra="forbid")

    model: str = "smollm2"
    """The orchestrator's causal LM (``smollm2``: the embedded model) or a local path."""
    lora: LoRAConfig | None = None
    """Train low-rank adapters (peft) instead of every weight, e.g. ``{"r": 16, "alpha": 32,
    "target_modules": ["q_proj", "v_proj"]}`` (``None``: full fine-tuning). The base weights
    stay frozen, so a higher ``learning_rate`` (1e-4..1e-3) is safe; ``save_model`` then
    saves the adapter only."""
    num_steps: int = Field(default=4, ge=1)
    """Training steps."""
    tasks_per_step: int = Field(default=1, ge=1)
    """Tasks (groups) per step, taken in order from a seeded shuffle of the training tasks
    per epoch (the last step of an epoch gets what is left)."""
    num_generations: int = Field(default=4, ge=2)
    """Plans sampled per task (the group size G)."""
    max_new_tokens: int = Field(default=64, ge=1)
    """Length limit of a plan."""
    temperature: float = Field(default=0.9, gt=0.0)
    """Sampling temperature of plans."""
    top_p: float = Field(default=0.95, gt=0.0, le=1.0)
    """Nucleus sampling mass."""
    learning_rate: float = Field(default=1e-5, gt=0.0)
    """AdamW learning rate (of the adapters with ``lora``, else of every weight)."""
    max_grad_norm: float | None = Field(default=1.0, gt=0.0)
    """Gradient clipping (``None``: off)."""
    normalize_advantages: bool = True
    """Divide group advantages by the group's standard deviation."""
    lambda1_init: float = 0.1
    """Initial weight of ``r_parallel``."""
    lambda1_final: float = 0.0
    """Final weight of ``r_parallel``. Set it (and ``lambda2_final``) equal to the initial
    value for a constant reward, so a rising reward cannot come from the schedule."""
    lambda2_init: float = 0.1
    """Initial weight of ``r_finish``."""
    lambda2_final: float = 0.0
    """Final weight of ``r_finish``."""
    anneal_steps: int | None = Field(default=None, ge=1)
    """Steps over which λ anneals (``None``: ``num_steps``)."""
    output_dir: str = f"{DEFAULT_RUNS_DIR}/parl_grpo"
    """The run directory (``langmarl.store.run``): ``run.json``, ``metrics.jsonl``,
    ``parl_curves.json``, ``checkpoints/``. A config file sets it with the top-level
    ``runs_dir``/``run_id`` (:class:`GRPOFile`), not in its ``grpo`` section."""
    save_steps: int | None = Field(default=1, ge=1)
    """Checkpoint (model or LoRA adapter, optimizer, RNG states) every this many steps and
    after the last, keeping the newest only; ``--resume latest`` continues from it. ``None``:
    no checkpoints (a killed run cannot resume). A full-model checkpoint of the embedded model
    is ~1.6 GB with its optimizer: raise it, or use ``lora``, for long full fine-tuning."""
    report_to: ReportTo = Field(default_factory=list)
    """Experiment trackers fed from the run's ``metrics.jsonl`` while it trains:
    ``"tensorboard"``, ``"mlflow"``, ``"wandb"``, ``"trackio"``, a list of them, ``"all"``
    (every installed one) or ``"none"`` (the default); each needs its extra, e.g.
    ``pip install 'langmarl[tensorboard]'``. Local trackers write inside the run directory."""
    num_threads: int | None = Field(default=None, ge=1)
    """torch threads for the run (``None``: ``$LANGMARL_TORCH_THREADS``, else the cores free
    at each step, :mod:`langmarl.core.cpu`). ``langmarl parl grpo``
    also gives the embedded sub-agents' engine this many threads unless
    ``LANGMARL_TORCH_THREADS`` is set."""
    seed: int = 0
    """Seed of task order, sampling (reseeded every step, so a resumed run samples as an
    uninterrupted one) and adapter initialization. A config file sets it with the top-level
    ``seed`` (:class:`GRPOFile`)."""
    save_model: bool = True
    """Save the trained orchestrator (model + tokenizer; the adapter only with ``lora``) to
    ``<output_dir>/model`` at the end: the artifact the run exists for (~540 MB for the
    embedded model in float32). ``false`` keeps only the checkpoints."""
    placement: Placement = "process"
    """Where the orchestrator trains: ``"process"`` (the default: in this process) or
    ``"ray"``: its model, optimizer and sampler are one Ray actor
    (:mod:`langmarl.magrpo.placement`, as a MAGRPO agent's), while this process keeps the
    episodes, the sub-agents, PARL rewards, advantages, the run directory and resume. Needs
    ``pip install 'langmarl[ray]'``. The four fields below are MAGRPO's (``trainer.*``),
    with the orchestrator as the one agent."""
    ray_address: str | None = None
    """With ``placement="ray"``: the cluster to join (``"host:port"`` of its head, or
    ``"auto"``); None starts a local Ray for the run (unless this process already joined
    one). A multi-machine run needs the run directory on storage every node shares."""
    agent_num_cpus: float = Field(default=1.0, gt=0.0)
    """With ``placement="ray"``: CPUs the orchestrator's actor reserves (its torch threads,
    unless ``num_threads``)."""
    agent_num_gpus: float = Field(default=0.0, ge=0.0)
    """With ``placement="ray"``: GPUs the orchestrator's actor reserves (> 0: it trains on
    ``cuda``)."""
    placement_strategy: PlacementStrategy = "PACK"
    """With ``placement="ray"``: Ray's placement-group strategy for the actor's bundle
    (``"PACK"``, ``"SPREAD"``, ``"STRICT_PACK"``, ``"STRICT_SPREAD"``; with one actor they
    place alike)."""

    @model_validator(mode="after")
    def _ray_is_installed(self) -> OrchestratorGRPOConfig:
        if self.placement == "ray" and not ray_installed():
            raise MissingDependencyError("ray", "ray", "grpo.placement='ray'")
        return self

    def reward_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``PARLReward``: λ anneals over ``anneal_steps`` or
        ``num_steps`` (:func:`langmarl.rewards.parl.schedule_kwargs`, imports torch)."""
        from langmarl.rewards.parl import schedule_kwargs

        return schedule_kwargs(self, self.num_steps)

    def trainer_config(self, num_tasks: int) -> TrainerConfig:
        """The :class:`TrainerConfig` of the shared weight-space loop: one agent (the
        orchestrator), ``tasks_per_step`` tasks a step, enough epochs over the ``num_tasks``
        training tasks for ``num_steps`` steps."""
        epochs = math.ceil(self.num_steps / math.ceil(num_tasks / self.tasks_per_step))
        return TrainerConfig(
            output_dir=self.output_dir, num_agents=1, max_new_tokens=self.max_new_tokens,
            temperature=self.temperature, top_p=self.top_p, learning_rate=self.learning_rate,
            max_grad_norm=self.max_grad_norm, lora=self.lora,
            per_device_train_batch_size=self.tasks_per_step, num_train_epochs=epochs,
            max_steps=self.num_steps, save_steps=self.save_steps, report_to=self.report_to,
            save_optimizer=True,  # its resume promises the sampling of an uninterrupted run
            num_threads=self.num_threads, seed=self.seed,
            # PARL GRPO samples and updates in fp32, as it did before it shared MAGRPO's
            # sampling and update: its config has no precision fields to choose otherwise
            sampling_precision="fp32", update_precision="fp32",
            placement=self.placement, ray_address=self.ray_address,
            agent_num_cpus=self.agent_num_cpus, agent_num_gpus=self.agent_num_gpus,
            placement_strategy=self.placement_strategy,
        )  # fmt: skip

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "grpo") -> OrchestratorGRPOConfig:
        """Validate ``data`` (e.g. a config file's ``grpo`` section).

        Raises:
            ConfigError: naming every invalid field, with "did you mean" for unknown keys.
        """
        try:
            return cls.model_validate(dict(data))
        except ValidationError as exc:
            raise config_error(exc, cls, source) from None


class GRPOFile(BaseModel):
    """A ``langmarl parl grpo`` config file: the environment, the GRPO settings, and where
    the run lands (``<runs_dir>/<run_id>``) with which seed."""

    model_config = ConfigDict(extra="forbid")

    env: dict[str, Any] = Field(default_factory=dict)
    """``ParallelTasksEnv`` keywords plus ``subagent_llm``: a preset name or an ``LLMConfig``
    mapping (``{"preset": "local", "temperature": 0}``), default ``local``."""
    grpo: dict[str, Any] = Field(default_factory=dict)
    """Fields of :class:`OrchestratorGRPOConfig` except ``output_dir`` and ``seed``, which
    the keys below set."""
    runs_dir: RunsDir = DEFAULT_RUNS_DIR
    """The directory holding runs, shared by every space."""
    run_id: RunId = None
    """The run's directory name inside ``runs_dir`` (``None``: ``parl_grpo``, so
    ``runs/parl_grpo`` as before run ids)."""
    seed: int = 0
    """Seed of task order, sampling and adapter initialization (the GRPO config's ``seed``)."""

    @model_validator(mode="before")
    @classmethod
    def _renamed_keys(cls, data: Any) -> Any:
        return take_section_placement(data, "grpo")

    @property
    def run_dir(self) -> Path:
        """Where the run lands: ``<runs_dir>/<run_id or parl_grpo>``."""
        return Path(self.runs_dir) / (self.run_id or "parl_grpo")

    def grpo_config(self) -> OrchestratorGRPOConfig:
        """The ``grpo`` section validated, with the run directory and seed set.

        Raises:
            ConfigError: naming every invalid field of the section.
        """
        placed = {**self.grpo, "output_dir": str(self.run_dir), "seed": self.seed}
        return OrchestratorGRPOConfig.from_mapping(placed)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "") -> GRPOFile:
        """Validate a config file's contents, its ``grpo`` section included.

        Raises:
            ConfigError: naming every invalid key, with "did you mean" for unknown ones.
        """
        try:
            loaded = cls.model_validate(dict(data))
        except ValidationError as exc:
            raise config_error(exc, cls, source) from None
        loaded.grpo_config()
        return loaded


def validate_grpo_file(data: dict[str, Any], source: str = "the config") -> None:
    """Check a PARL GRPO config file as ``langmarl parl grpo`` would.

    Raises:
        ConfigError: naming every invalid key, with "did you mean" for unknown ones.
    """
    GRPOFile.from_mapping(data, source)
