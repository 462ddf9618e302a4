"""`LoopConfig`: the settings of one Prompt2Policy session (saved in its ``run.json``, so a
resumed session runs with the settings it started with)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from langmarl.config.runs_root import (
    DEFAULT_RUNS_DIR,
    SEEDS_MEANING,
    RunId,
    RunsDir,
    take_renamed,
)
from langmarl.p2p.learner.train_config import TrainConfig


class LoopConfig(BaseModel):
    """Settings of one Prompt2Policy session."""

    model_config = ConfigDict(extra="forbid")

    env_id: str = "HalfCheetah-v5"
    """Gymnasium MuJoCo env id."""
    max_iterations: int = Field(default=5, ge=1)
    """Train/judge/revise rounds at most."""
    ppo_budget: int | None = Field(default=None, ge=1)
    """PPO steps the session may train over all its candidates (the baseline not counted):
    it ends, status ``max_iterations`` with the reason, before an iteration whose
    candidates (x configs x seeds x ``total_timesteps``) would take it past the budget.
    None: ``max_iterations`` alone bounds it."""
    pass_threshold: float = Field(default=0.7, ge=0, le=1)
    """Intent score at which the session passes."""
    author: Literal["auto", "structured", "random", "free_form"] = "auto"
    """Who writes the rewards: ``structured``, the model ranks the env's objectives by
    likelihood and the search trains them in that order, then variants of the best
    (compiled to reward code: what a small model can do; :mod:`langmarl.p2p.design.search`);
    ``random``, the same search with proposals drawn at random from the catalog, no model
    (the control); ``free_form``, the model writes and revises reward code (for capable
    models); ``auto``, structured when the model can rank options (a local model), else
    free-form."""
    candidates: int = Field(default=2, ge=1, le=16)
    """Rewards trained per iteration, the best kept (by the check, else the judges). Each
    trains every config x seed; two fill a 2-core machine with one seed each. Free-form
    authors write (or revise) this many and identical ones train once."""
    demonstrations: int = Field(default=2, ge=0, le=8)
    """Verified rewards for the most similar intents of other envs (and rewards earlier
    sessions' checks passed, in ``runs_dir``) shown to a free-form author as earlier chat
    turns before it writes (:mod:`langmarl.p2p.design.demonstrations`); 0: none."""
    elaborate: bool = True
    """Turn the intent into measurable criteria first (one LLM call)."""
    review: bool = True
    """Have the LLM review the authored reward before validation."""
    max_fix_attempts: int = Field(default=2, ge=0)
    """LLM fix rounds when reward code fails validation."""
    fallback: Literal["template", "none"] = "template"
    """When no authored reward validates: "template" trains the env's own reward terms
    (marked origin="fallback"); "none" stops with status invalid_code."""
    code_judge: bool = True
    """Write a judge_fn once per session and run it (sandboxed) on every iteration."""
    summary_judge: bool | Literal["auto"] = "auto"
    """Let the LLM score the episode's measurements; ``auto``: a model that writes (an
    OpenAI-compatible endpoint), not a local model, which ranks options instead (the
    embedded SmolLM2-135M's verdicts never parsed: it spent half a smoke session's CPU on
    them)."""
    check: str | None = None
    """A check file (:mod:`langmarl.p2p.design.checks`): ``check(trajectory, summary)``
    scores each evaluation episode in [0, 1]; with one, its score picks the best iteration
    and decides whether the session passes, and the judges' verdict is recorded beside it.
    The session keeps a copy (``check.py``); a broken file stops the session before it
    starts, in one line."""
    baseline: bool = False
    """Before iteration 1, train the environment's own reward at the same budget (config and
    seeds) and score it with the check (``baseline/`` in the session): the final line then
    reads "Intent score: <env reward> → <best>". Needs ``check``."""
    synthesis: Literal["mean", "veto", "llm"] = "mean"
    """How the judges' scores become the iteration's: their mean; the lowest (any judge
    below ``pass_threshold`` vetoes); or the LLM reconciles the verdicts
    (:mod:`langmarl.p2p.agents.synthesis`)."""
    llm: str | dict[str, Any] | None = None
    """The agents' LLM (author, judges, reviser): a preset name, an LLM config file or an LLM
    config mapping; ``langmarl p2p run --llm`` wins; None: the embedded model. How a session
    started as a job or over the API (``POST /api/sessions``) names its model. An
    ``api_key`` here is refused: the config is saved with the session, so name the key's
    environment variable (``api_key_env_var``) instead."""
    vlm: str | dict[str, Any] | None = None
    """A multimodal LLM for the video judge, the same forms (``--vlm`` wins); None: none."""
    judge_workers: int = Field(default=3, ge=1, le=16)
    """Judges of an iteration run at once at most (code, summary and video judges)."""
    hp_tuning: bool = True
    """Let the reviser change whitelisted hyperparameters (clamped, see HP_BOUNDS)."""
    reviser_tool_rounds: int = Field(default=4, ge=0, le=20)
    """Rounds in which the reviser's model may call look-back tools (earlier iterations'
    code, metrics, judgments, frames) before its final reply; 0: one call, no tools."""
    total_timesteps: int = Field(default=100_000, ge=1)
    """Training budget per run."""
    seed: int | list[int] = 1
    """The training runs' seed, or a list of seeds: each iteration trains once per seed
    (one executor process each). Replaces ``seeds``, still read for now with a deprecation
    line."""
    train: dict[str, Any] = Field(default_factory=dict)
    """TrainConfig overrides on top of the env preset."""
    configs: list[dict[str, Any]] = Field(default_factory=list)
    """Several configs per iteration: TrainConfig overrides, each on top of the
    iteration's config (empty: that config alone). Every config trains once per seed; the
    judged run is the median seed of the config with the best mean return. A key set here
    is fixed for that config: the reviser's changes apply to the other keys."""
    backend: Literal["process", "local", "ray"] = "process"
    """Where the configs x seeds train: ``process``, confined processes of this one (at
    most ``max_parallel``); ``local``, jobs on the local backend, each pinned to
    ``cpus_per_run`` free cores; ``ray``, jobs on a Ray cluster (``ray_address``), spread
    over its nodes. Each run is confined alike in every case."""
    cpus_per_run: int = Field(default=1, ge=1)
    """Cores a training job reserves (``local``, ``ray``)."""
    ray_address: str | None = None
    """The Ray cluster (``backend="ray"``; None: a local one is started)."""
    max_parallel: int | None = None
    """Training processes at once (default: CPU count)."""
    train_timeout_s: float = Field(default=3600.0, gt=0)
    """Wall-clock limit per training run."""
    dominance_threshold: float = Field(default=0.8, gt=0, le=1)
    """Share of reward magnitude above which one term is flagged as dominating."""
    analyze: bool = True
    """Analyse the session when it ends (``analysis.json``, :mod:`langmarl.p2p.analysis.analyze`);
    a failed analysis never changes the session's status."""
    narrative: bool | Literal["auto"] = "auto"
    """The analysis's narrative written by the LLM (one call, kept if it quotes only the
    facts' numbers, else the rules' narrative) or by the rules; ``auto``: the LLM when it
    writes, as ``summary_judge`` (the embedded model's narratives never passed the check)."""
    runs_dir: RunsDir = DEFAULT_RUNS_DIR
    """The directory holding runs, shared by every space; the session's directory is
    ``<runs_dir>/<run_id>``."""
    run_id: RunId = None
    """The session's directory name inside ``runs_dir`` (``None``: a new
    ``session_<time>_<hex>`` id per session)."""

    @model_validator(mode="before")
    @classmethod
    def _renamed_keys(cls, data: Any) -> Any:
        return take_renamed(data, "seeds", "seed", SEEDS_MEANING)

    @field_validator("llm", "vlm")
    @classmethod
    def _an_llm(cls, value: str | dict[str, Any] | None) -> str | dict[str, Any] | None:
        from langmarl.llm.config import coerce_llm

        if isinstance(value, dict) and value.get("api_key"):
            raise ValueError(
                "an api_key in a session's config would be saved with the session: set the "
                "key in the environment and name its variable with api_key_env_var"
            )
        coerce_llm(value)  # a ConfigError names the preset or file that is not there
        return value

    @field_validator("seed")
    @classmethod
    def _some_seed(cls, value: int | list[int]) -> int | list[int]:
        if value == []:
            raise ValueError("seed is an empty list: give a seed (e.g. 1) or a list of seeds")
        return value

    @model_validator(mode="after")
    def _configs_are_train_configs(self) -> LoopConfig:
        for key in ("env_id", "total_timesteps"):
            if key in self.train:
                raise ValueError(
                    f"train.{key} is set: {key} is a top-level field of the session, "
                    f"move it out of train ({key}={self.train[key]!r})"
                )
        if self.baseline and self.check is None:
            raise ValueError(
                "baseline is true but no check is set: the baseline is the check's score of "
                "the environment's own reward; give check (a check file) or drop baseline"
            )
        one_run = self.total_timesteps * max(len(self.configs), 1) * len(self.seeds)
        if self.ppo_budget is not None and self.ppo_budget < one_run:
            raise ValueError(
                f"ppo_budget is {self.ppo_budget:,} PPO steps, less than one candidate trains "
                f"({one_run:,}: total_timesteps x configs x seeds): raise it or drop it"
            )
        if self.ray_address is not None and self.backend != "ray":
            raise ValueError(
                f"ray_address is set but backend is {self.backend!r}: set backend=ray "
                "(or drop ray_address)"
            )
        self.train_configs(self.train_config())  # a ConfigError names configs[i] and the field
        return self

    @property
    def seeds(self) -> list[int]:
        """``seed`` as a list: the seeds each iteration trains with."""
        return [self.seed] if isinstance(self.seed, int) else list(self.seed)

    def train_config(self) -> TrainConfig:
        """The first iteration's TrainConfig."""
        return TrainConfig.for_env(self.env_id, total_timesteps=self.total_timesteps, **self.train)

    def train_configs(self, base: TrainConfig) -> list[TrainConfig]:
        """The configs an iteration trains: ``base`` with each of :attr:`configs` applied
        (``[base]`` without any).

        Raises:
            ConfigError: naming the config and field that TrainConfig rejects.
        """
        if not self.configs:
            return [base]
        return [
            TrainConfig.from_dict({**base.model_dump(), **overrides}, f"configs[{i}]")
            for i, overrides in enumerate(self.configs)
        ]


def validate_loop_config(data: dict[str, Any], source: str = "the config") -> None:
    """Check a Prompt2Policy session's config as ``langmarl p2p run`` would.

    Raises:
        ConfigError: naming the invalid field and the fix.
    """
    from pydantic import ValidationError

    from langmarl.core.validation import config_error

    try:
        LoopConfig.model_validate(data)
    except ValidationError as exc:
        raise config_error(exc, LoopConfig, source) from None
