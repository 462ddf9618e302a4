"""The Prompt2Policy loop: intent -> reward -> train -> judge -> revise, until it passes.

::

    criteria = elaborate(intent)                       # optional
    reward   = validate_and_fix(review(author(intent)))  # or the fallback template
    for i in 1..max_iterations:
        summary   = train(reward, config)              # executor processes, never in-process
        judgment  = judge(summary, trajectory, video)  # code / summary / VLM judges + guardrails
        if judgment.intent_score >= pass_threshold: status = "passed"; break
        reward, config = revise(reward, judgment)      # validated; clamped hyperparameters

Final statuses: ``passed``, ``max_iterations``, ``invalid_code`` (no reward validated and
``fallback="none"``), ``error`` (an LLM, training or I/O failure; the message says which).

Secrets: the session's :class:`~langmarl.core.secrets.Redactor` (environment secrets and the
LLM clients' keys) scrubs every file of the session directory, the log records emitted
while the session runs, and the returned :class:`LoopResult`; a model that echoes its API
key leaves ``[REDACTED]`` behind.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from langmarl.core.secrets import Redactor, environment_secrets, llm_secrets, redacting_logs
from langmarl.p2p import author, judge, reviser
from langmarl.p2p.contracts import (
    IterationAggregation,
    IterationResult,
    JudgeScore,
    JudgmentResult,
    LoopResult,
    RewardOrigin,
    RewardSpec,
)
from langmarl.p2p.env_specs import MujocoEnvSpec, get_env_spec
from langmarl.p2p.executor import run_record, train_runs
from langmarl.p2p.guardrails import check_guardrails, plateau
from langmarl.p2p.records import IterationRecord, SessionRecord
from langmarl.p2p.train_config import TrainConfig
from langmarl.p2p.validation import ValidationResult, validate_reward_code

if TYPE_CHECKING:
    from langmarl.llm.client import LLMClient

logger = logging.getLogger(__name__)

Trainer = Callable[[IterationRecord, Path, list[TrainConfig], list[int]], IterationAggregation]
"""(iteration, reward file, configs, seeds) -> aggregation; executor processes by default."""


class LoopConfig(BaseModel):
    """Settings of one Prompt2Policy session."""

    model_config = ConfigDict(extra="forbid")

    env_id: str = "HalfCheetah-v5"
    """Gymnasium MuJoCo env id."""
    max_iterations: int = Field(default=5, ge=1)
    """Train/judge/revise rounds at most."""
    pass_threshold: float = Field(default=0.7, ge=0, le=1)
    """Intent score at which the session passes."""
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
    summary_judge: bool = True
    """Let the LLM score the episode's measurements."""
    hp_tuning: bool = True
    """Let the reviser change whitelisted hyperparameters (clamped, see HP_BOUNDS)."""
    total_timesteps: int = Field(default=100_000, ge=1)
    """Training budget per run."""
    seeds: list[int] = Field(default_factory=lambda: [1])
    """Seeds per iteration (one executor process each)."""
    train: dict[str, Any] = Field(default_factory=dict)
    """TrainConfig overrides on top of the env preset."""
    max_parallel: int | None = None
    """Training processes at once (default: CPU count)."""
    train_timeout_s: float = Field(default=3600.0, gt=0)
    """Wall-clock limit per training run."""
    dominance_threshold: float = Field(default=0.8, gt=0, le=1)
    """Share of reward magnitude above which one term is flagged as dominating."""

    def train_config(self) -> TrainConfig:
        """The first iteration's TrainConfig."""
        return TrainConfig.for_env(self.env_id, total_timesteps=self.total_timesteps, **self.train)


def new_session_id() -> str:
    """``session_<utc time>_<random>``."""
    return f"session_{time.strftime('%Y%m%d_%H%M%S', time.gmtime())}_{secrets.token_hex(2)}"


@dataclass
class Outcome:
    """What one training + judging step produced."""

    judgment: JudgmentResult
    term_means: dict[str, float]
    measurements: str
    mean_return: float


@dataclass
class Session:
    """Everything one loop run needs; its methods are the loop's steps."""

    intent: str
    config: LoopConfig
    spec: MujocoEnvSpec
    llm: LLMClient
    vlm: LLMClient | None
    record: SessionRecord
    result: LoopResult
    validator: Callable[[str, str], ValidationResult]
    trainer: Trainer
    criteria: str = ""
    judge_code: str | None = None
    judge_code_problem: str | None = None
    """Why the configured code judge is missing (its authoring failed), recorded per judgment."""
    last_errors: list[str] = field(default_factory=list)
    """Validation errors met while producing the current reward."""

    def prepare(self) -> None:
        """Criteria and (optionally) the code judge."""
        self.criteria = (
            author.elaborate(self.llm, self.intent, self.spec)
            if self.config.elaborate
            else f"- {self.intent}"
        )
        self.result.criteria = self.criteria
        if self.config.code_judge:
            self.judge_code, errors = judge.author_judge(
                self.llm, self.intent, self.criteria, self.spec
            )
            if self.judge_code is None:
                self.judge_code_problem = "no usable judge_fn: " + " | ".join(errors[-2:])
                logger.info("%s; judging without the code judge", self.judge_code_problem)
            else:
                self.record.redact.write_text(self.record.path / "judge_fn.py", self.judge_code)

    def first_reward(self) -> tuple[str, RewardOrigin, ValidationResult] | None:
        """An authored reward, the fallback template, or None (-> invalid_code)."""
        authored = author.author_reward(
            self.llm, self.intent, self.criteria, self.spec, do_review=self.config.review,
            max_fix_attempts=self.config.max_fix_attempts, validator=self.validator,
        )  # fmt: skip
        self.last_errors = authored.errors
        if authored.source is not None and authored.validation is not None:
            return authored.source, "author", authored.validation
        self.result.error = "no authored reward validated: " + " | ".join(authored.errors[-3:])
        if self.config.fallback == "none":
            return None
        source = author.fallback_reward(self.spec)
        validation = self.validator(source, self.spec.env_id)
        return (source, "fallback", validation) if validation.ok else None

    def train_and_judge(self, it: IterationRecord, config: TrainConfig) -> Outcome | str:
        """Train on the iteration's reward and judge it; an error message if no run finished."""
        aggregation = self.trainer(it, it.reward_fn_path, [config], list(self.config.seeds))
        if not aggregation.runs:
            error = "; ".join(f"{k}: {v}" for k, v in aggregation.errors.items()) or "no runs"
            it.set_status("error", error)
            return f"training failed: {error}"
        run = run_record(it, aggregation)
        summary = run.read_summary() or aggregation.runs[aggregation.best_run or ""]
        path = run.trajectory_path
        trajectory = judge.load_trajectory(path) if path and path.suffix == ".npz" else {}
        warnings = check_guardrails(
            summary.term_means,
            [c.mean_return for c in summary.checkpoints],
            self.config.dominance_threshold,
        )
        videos = summary.checkpoints[-1].videos if summary.checkpoints else {}
        video = run.videos_dir / videos["median"] if "median" in videos else None
        scores = judge.judge_run(
            self.llm, self.intent, self.criteria, self.spec, trajectory, judge_code=self.judge_code,
            use_summary=self.config.summary_judge, vlm=self.vlm, video=video,
        )  # fmt: skip
        if self.judge_code_problem:  # recorded, so the judgment says which judges ran
            scores.append(JudgeScore(judge="code", reason=self.judge_code_problem[:300]))
        judgment = judge.synthesize(scores, warnings, self.config.pass_threshold)
        past = [s.intent_score for s in self.result.iterations if s.intent_score is not None]
        stalled = plateau([*past, judgment.intent_score], window=3, rel_tol=0.05)
        if stalled:
            judgment.warnings.append(f"intent score {stalled}")
            judgment.failure_tags.append("intent_plateau")
        it.save_judgment(judgment)
        it.set_status("completed")
        measurements = (
            judge.measurements_text(judge.trajectory_summary(trajectory)) if trajectory else ""
        )
        return Outcome(judgment, summary.term_means, measurements, aggregation.mean_return)

    def next_reward(
        self, source: str, outcome: Outcome, config: TrainConfig
    ) -> tuple[str, RewardOrigin, ValidationResult | None, TrainConfig, dict[str, float]]:
        """Revise; an invalid revision keeps the current reward (origin "previous")."""
        revision = reviser.revise(
            self.llm, intent=self.intent, code=source, judgment=outcome.judgment,
            term_means=outcome.term_means, measurements=outcome.measurements, config=config,
            spec=self.spec, hp_tuning=self.config.hp_tuning,
        )  # fmt: skip
        new_config = reviser.apply_hp_changes(config, revision.hp_changes)
        self.last_errors = [revision.notes] if revision.notes else []
        if revision.reward_code:
            fixed = author.validate_and_fix(
                self.llm, revision.reward_code, self.spec,
                max_fix_attempts=self.config.max_fix_attempts, validator=self.validator,
            )  # fmt: skip
            self.last_errors = fixed.errors
            if fixed.source is not None:
                return fixed.source, "revision", fixed.validation, new_config, revision.hp_changes
        return source, "previous", None, new_config, revision.hp_changes

    def run(self) -> None:
        """The loop; sets ``self.result.status``."""
        self.prepare()
        first = self.first_reward()
        if first is None:
            self.result.status = "invalid_code"
            return
        source, origin, validation = first
        config = self.config.train_config()
        for number in range(1, self.config.max_iterations + 1):
            it = self.record.new_iteration(number)
            write_iteration_inputs(it, self.intent, source, origin, validation, config)
            step = IterationResult(
                iteration=number,
                iteration_id=it.iteration_id,
                reward_origin=origin,
                validation_errors=list(self.last_errors),
            )
            self.result.iterations.append(step)
            self.record.touch_heartbeat()
            outcome = self.train_and_judge(it, config)
            if isinstance(outcome, str):
                step.error = self.result.error = outcome
                self.result.status = "error"
                return
            step.intent_score, step.mean_return = outcome.judgment.intent_score, outcome.mean_return
            self.track_best(number, outcome.judgment.intent_score)
            self.record.save_history(self.result.model_dump())
            self.record.record_iteration(
                number, step.intent_score, step.mean_return, self.result.best_score
            )
            if outcome.judgment.passed:
                self.result.status = "passed"
                return
            if number == self.config.max_iterations:
                break
            source, origin, revised, config, step.hp_changes = self.next_reward(
                source, outcome, config
            )
            validation = revised or validation
            it.save_revised_reward(source)
        self.result.status = "max_iterations"

    def track_best(self, number: int, score: float) -> None:
        if self.result.best_score is None or score > self.result.best_score:
            self.result.best_iteration, self.result.best_score = number, score


def write_iteration_inputs(
    it: IterationRecord, intent: str, source: str, origin: RewardOrigin,
    validation: ValidationResult, config: TrainConfig,
) -> None:  # fmt: skip
    """prompt.txt, reward_fn.py, reward_spec.json and config.json of an iteration."""
    it.save_prompt(intent)
    it.save_reward_source(source)
    spec = RewardSpec(
        latex=validation.latex,
        terms=validation.terms,
        description=validation.description,
        origin=origin,
    )
    it.save_reward_spec(spec)
    it.save_config(config)


def run_loop(
    intent: str,
    config: LoopConfig | None = None,
    *,
    llm: LLMClient | None = None,
    vlm: LLMClient | None = None,
    runs_dir: str | Path = "runs",
    session_id: str | None = None,
    validator: Callable[[str, str], ValidationResult] | None = None,
    trainer: Trainer | None = None,
) -> LoopResult:
    """Run one Prompt2Policy session and return its result (also in ``loop_history.json``).

    Args:
        intent: The behaviour wanted, in words ("make the cheetah run backwards").
        config: Loop settings (defaults: ``LoopConfig()``).
        llm: Client for every text agent (default: the embedded model).
        vlm: A multimodal client for the video judge (None: no VLM judge).
        runs_dir: Parent directory of the session directory.
        session_id: Session directory name (default: a new ``session_...`` id).
        validator: Reward validator (default: the sandboxed :func:`validate_reward_code`).
        trainer: Training function (default: executor processes via :func:`train_runs`).

    Never raises for LLM, training or I/O failures: they end the session with status
    ``error`` and the message in ``LoopResult.error``. Bad arguments raise ConfigError.
    """
    config = config or LoopConfig()
    spec = get_env_spec(config.env_id)
    if llm is None:
        from langmarl.llm.client import LLMClient
        from langmarl.llm.config import LLMConfig

        llm = LLMClient(LLMConfig.from_preset("local"), role="p2p")
    redact = Redactor(
        environment_secrets() | llm_secrets([llm.config, vlm.config if vlm else None])
    )
    record = SessionRecord(Path(runs_dir) / (session_id or new_session_id()), redact)
    record.path.mkdir(parents=True, exist_ok=True)
    record.save_metadata(
        {
            "prompt": intent,
            "env_id": config.env_id,
            "config": config.model_dump(),
            "created_at": time.time(),
        }
    )
    record.start(intent, config.env_id, config.model_dump())
    result = LoopResult(
        session_id=record.session_id, prompt=intent, env_id=config.env_id, status="running"
    )
    session = Session(
        intent, config, spec, llm, vlm, record, result,
        validator or (lambda source, env_id: validate_reward_code(source, env_id)),
        trainer or _default_trainer(config),
    )  # fmt: skip
    with redacting_logs(redact):
        try:
            session.run()
        except KeyboardInterrupt:
            result.status, result.error = "cancelled", "interrupted"
            _finish(record, result)
            raise
        except Exception as exc:  # the loop's edge: record any failure as a status, never crash
            logger.exception("p2p session %s failed", record.session_id)
            result.status, result.error = "error", f"{type(exc).__name__}: {exc}"
    _finish(record, result)
    return LoopResult.model_validate_json(redact(result.model_dump_json()))


def _finish(record: SessionRecord, result: LoopResult) -> None:
    """Write the final status.json and loop_history.json."""
    record.set_status(result.status, result.error if result.status != "passed" else None)
    record.save_history(result.model_dump())


def _default_trainer(config: LoopConfig) -> Trainer:
    def trainer(
        it: IterationRecord, reward: Path, configs: list[TrainConfig], seeds: list[int]
    ) -> IterationAggregation:
        return train_runs(
            it,
            reward,
            configs,
            seeds,
            max_parallel=config.max_parallel,
            timeout_s=config.train_timeout_s,
        )

    return trainer
