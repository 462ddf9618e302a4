"""The Prompt2Policy loop: intent -> rewards -> train -> judge -> revise, until it passes.

::

    criteria   = elaborate(intent)                       # optional
    candidates = propose(1)                              # K rewards (proposing.py): the
                                                         # search over the catalog, or the
                                                         # model's code (fallback template)
    for i in 1..max_iterations:
        for each candidate:                              # iteration.py; at once where the
            summary  = train(reward, config)             #   cores allow; executor processes
            judgment = judge(summary, trajectory, video) #   code/summary/VLM judges, check
        best = the candidate with the best score         # the check's, else the judges'
        if best passes: status = "passed"; break
        candidates = propose(i + 1, best, judgment)      # variants of the best, new ones,
                                                         # or revisions (clamped hyperparams)

Final statuses: ``passed``, ``max_iterations``, ``invalid_code`` (no reward validated and
``fallback="none"``), ``error`` (an LLM, training or I/O failure; the message says which).

Every step ends by saving ``loop_history.json`` (see :mod:`langmarl.p2p.session.records`): after
the criteria, after an iteration's inputs are written, after each candidate is judged,
after the iteration is. :class:`Session`
runs from whatever the history holds, so a new session and a resumed one
(:func:`langmarl.p2p.session.resume.resume_session`) take the same path. One process at a time
runs a session (its :class:`~langmarl.store.lock.RunLock`).

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
from typing import TYPE_CHECKING, Literal

from langmarl.core.errors import ConfigError, LangmarlError
from langmarl.core.secrets import Redactor, environment_secrets, llm_secrets, redacting_logs
from langmarl.p2p.agents import author, judge
from langmarl.p2p.design import baseline, candidates, checks, demonstrations
from langmarl.p2p.design.proposals import Proposal
from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.reward.env_specs import MujocoEnvSpec, get_env_spec
from langmarl.p2p.reward.validation import ValidationResult, reward_spec
from langmarl.p2p.session import iteration, judging, proposing
from langmarl.p2p.session.config import LoopConfig
from langmarl.p2p.session.contracts import (
    CandidateResult,
    CheckResult,
    IterationAggregation,
    IterationOutcome,
    IterationResult,
    LoopResult,
    RewardSpec,
)
from langmarl.p2p.session.iteration import track_best
from langmarl.p2p.session.records import IterationInputs, IterationRecord, SessionRecord
from langmarl.p2p.session.trainers import Trainer, default_trainer, default_validator

if TYPE_CHECKING:
    from langmarl.llm.client import LLMClient

logger = logging.getLogger(__name__)

__all__ = [  # LoopConfig lives in loop_config; importing it from here keeps working
    "LoopConfig", "Session", "Trainer", "default_trainer", "default_validator", "execute",
    "new_session_id", "reward_spec", "run_loop", "session_clients", "track_best",
]  # fmt: skip


def new_session_id() -> str:
    """``session_<utc time>_<random>``."""
    return f"session_{time.strftime('%Y%m%d_%H%M%S', time.gmtime())}_{secrets.token_hex(2)}"


@dataclass
class Session:
    """Everything one loop run needs; its methods are the loop's steps.

    ``result`` is the history so far (empty for a new session) and ``prepared`` whether the
    criteria and the code judge are already in it; :meth:`run` continues from there.
    """

    intent: str
    config: LoopConfig
    spec: MujocoEnvSpec
    llm: LLMClient
    vlm: LLMClient | None
    record: SessionRecord
    result: LoopResult
    validator: Callable[[str, str], ValidationResult]
    trainer: Trainer
    prepared: bool = False
    judge_code: str | None = None
    check: str | None = None
    """The session's check (:mod:`~langmarl.p2p.design.checks`): its score decides."""
    last_errors: list[str] = field(default_factory=list)
    """Validation errors met while producing the current reward."""

    def writes(self, setting: bool | Literal["auto"]) -> bool:
        """Whether to ask the model for free text (a judge's verdict, a narrative): the
        ``setting``, and for ``"auto"`` a model that does not rank options (an endpoint,
        not a local model: :attr:`~langmarl.llm.client.LLMClient.ranks_options`)."""
        return not self.llm.ranks_options if setting == "auto" else setting

    def prepare(self) -> None:
        """Criteria and (optionally) the code judge."""
        self.result.criteria = (
            author.elaborate(self.llm, self.intent, self.spec)
            if self.config.elaborate
            else f"- {self.intent}"
        )
        if self.config.code_judge:
            self.judge_code, errors = judge.author_judge(
                self.llm, self.intent, self.result.criteria, self.spec
            )
            if self.judge_code is None:
                problem = "no usable judge_fn: " + " | ".join(errors[-2:])
                self.result.judge_code_problem = problem
                logger.info("%s; judging without the code judge", problem)
            else:
                self.record.redact.write_text(self.record.path / "judge_fn.py", self.judge_code)
        self.record.run.event(
            "prepared", criteria=self.result.criteria, code_judge=self.judge_code is not None,
            judge_problem=self.result.judge_code_problem,
        )  # fmt: skip
        self.prepared = True

    def train_baseline(self) -> None:
        """The environment's own reward at iteration 1's budget, scored by the check, into
        ``baseline/`` and the history (:mod:`~langmarl.p2p.design.baseline`)."""
        config = self.config.train_config()
        self.record.touch_heartbeat()
        result = baseline.train_baseline(
            IterationRecord(self.record.path / baseline.BASELINE_DIR, self.record.redact),
            self.spec, self.trainer, self.config.train_configs(config), list(self.config.seeds),
            lambda it, trajectory: self.run_check(it, trajectory, config) or CheckResult(),
        )  # fmt: skip
        self.result.baseline = result
        self.commit()

    def judge_trained(
        self, it: IterationRecord, config: TrainConfig, aggregation: IterationAggregation
    ) -> IterationOutcome | str:
        """Judge (and check) what ``it`` trained (:func:`.judging.judge_trained`); an error
        message if no run finished."""
        return judging.judge_trained(self, it, config, aggregation)

    def run_check(
        self, it: IterationRecord, trajectory: Path | None, config: TrainConfig
    ) -> CheckResult | None:
        """The session's check on every evaluation episode of the judged run (None without a
        check), recorded as the iteration's ``checked`` event."""
        if self.check is None:
            return None
        result = checks.score_run(
            self.check, trajectory, self.config.pass_threshold, config.max_episode_steps
        )
        self.record.run.event(
            "checked", iteration=it.iteration_id, score=result.score, passed=result.passed,
            episodes=result.episodes, reason=result.reason,
        )  # fmt: skip
        return result

    def run(self) -> None:
        """The loop from wherever ``result`` stands; sets ``self.result.status``."""
        if not self.prepared:
            self.prepare()
            self.commit()
        if self.config.baseline and self.check is not None and self.result.baseline is None:
            self.train_baseline()
        if not self.result.iterations:
            first, _ = proposing.propose(self, 1)
            if not first:
                self.result.status = "invalid_code"
                return
            self.open_iteration(1, first)
        while True:
            step = self.result.iterations[-1]
            it = self.record.iteration(step.iteration)
            judged = step.judged or step.intent_score is not None
            outcome = it.read_outcome() if judged else None
            if outcome is None:
                trained = iteration.train_iteration(self, step, it)
                if trained is None:
                    return
                outcome = trained
            if outcome.passed:
                self.result.status = "passed"
                if self.check is not None:  # checked: a demonstration for later sessions
                    self.accept(it)
                return
            if step.iteration >= self.config.max_iterations:
                self.result.status = "max_iterations"
                return
            following, step.hp_changes = proposing.propose(
                self, step.iteration + 1, it.read_inputs(), outcome
            )
            spent = self.over_budget(following)
            if not following or spent:
                self.result.status = "max_iterations"
                self.result.error = spent or "the search has no candidate left to train"
                return
            it.save_revised_reward(following[0].source)
            self.open_iteration(step.iteration + 1, following)

    def open_iteration(self, number: int, inputs: list[IterationInputs]) -> None:
        """Write iteration ``number``'s candidates' inputs, then list it in the history."""
        it = self.record.new_iteration(number)
        names = candidates.write(it, self.intent, inputs)
        listed = [
            CandidateResult(name=name, origin=one.spec.origin, proposal=_described(one.spec))
            for name, one in zip(names, inputs, strict=True)
        ]
        step = IterationResult(
            iteration=number, iteration_id=it.iteration_id, reward_origin=inputs[0].spec.origin,
            validation_errors=list(self.last_errors), candidates=listed,
        )  # fmt: skip
        self.result.iterations.append(step)
        self.record.run.event(
            "iteration_opened", iteration=it.iteration_id, origin=step.reward_origin,
            validation_errors=step.validation_errors, config=inputs[0].config.model_dump(),
            candidates=[c.model_dump(include={"name", "origin", "proposal"}) for c in listed],
        )  # fmt: skip
        self.commit()

    def over_budget(self, following: list[IterationInputs]) -> str | None:
        """Why training ``following`` would take the session past ``ppo_budget`` (None:
        it would not, or there is no budget)."""
        budget = self.config.ppo_budget
        runs = max(len(self.config.configs), 1) * len(self.config.seeds)
        planned = sum(one.config.total_timesteps for one in following) * runs
        if budget is None or self.result.ppo_steps + planned <= budget:
            return None
        spent = self.result.ppo_steps
        return (f"the PPO budget is spent: {spent:,} of {budget:,} steps trained, and the "
                f"next iteration's candidates would take {planned:,} more")  # fmt: skip

    def accept(self, it: IterationRecord) -> None:
        """Add ``it``'s reward to the demonstrations of the runs directory
        (:func:`~langmarl.p2p.design.demonstrations.accept`); a failure to write is logged,
        never the session's."""
        try:
            demonstrations.accept(self.record.path.parent, self.intent, self.spec.env_id,
                                  it.read_reward_source(), self.record.session_id)  # fmt: skip
        except (OSError, LangmarlError) as exc:
            logger.warning("the passed reward was not added to the demonstrations: %s", exc)

    def commit(self) -> None:
        """Save ``loop_history.json``: what a resumed session continues from."""
        self.record.save_history(self.result.model_dump())


def _described(spec: RewardSpec) -> str:
    return "" if spec.proposal is None else Proposal.model_validate(spec.proposal).describe()


def run_loop(
    intent: str,
    config: LoopConfig | None = None,
    *,
    llm: LLMClient | None = None,
    vlm: LLMClient | None = None,
    runs_dir: str | Path | None = None,
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
        runs_dir: Parent directory of the session directory (default: ``config.runs_dir``).
        session_id: Session directory name (default: ``config.run_id``, else a new
            ``session_...`` id).
        validator: Reward validator (default: the sandboxed :func:`validate_reward_code`).
        trainer: Training function (default: executor processes via :func:`train_runs`).

    Never raises for LLM, training or I/O failures: they end the session with status
    ``error`` and the message in ``LoopResult.error``; a killed, stopped or failed session
    continues with :func:`langmarl.p2p.session.resume.resume_session`.

    Raises:
        ConfigError: for an unknown env, or a session directory that already holds a session.
        RunLockedError: if another process runs the session.
    """
    config = config or LoopConfig()
    spec = get_env_spec(config.env_id)
    check = None
    if config.check is not None:  # a broken check stops the session before anything runs
        check = checks.read_check(config.check)
        checks.try_check(check, spec, f"check file {config.check}")
    llm, redact = session_clients(llm, vlm)
    name = session_id or config.run_id or new_session_id()
    record = SessionRecord(Path(runs_dir or config.runs_dir) / name, redact)
    with record.run.lock():
        if record.run.exists():
            raise ConfigError(
                f"{record.path} already holds a session: resume it with "
                "`langmarl p2p resume <session dir>`, or pick another session_id"
            )
        result = _open(record, intent, config, check)
        session = Session(
            intent, config, spec, llm, vlm, record, result,
            validator or default_validator, trainer or default_trainer(config), check=check,
        )  # fmt: skip
        return execute(session)


def _open(record: SessionRecord, intent: str, config: LoopConfig, check: str | None) -> LoopResult:
    """Start a new session's files (metadata, ``run.json``, the check's copy) and its result."""
    record.save_metadata(
        {
            "prompt": intent,
            "env_id": config.env_id,
            "config": config.model_dump(),
            "created_at": time.time(),
        }
    )
    record.start(intent, config.env_id, config.model_dump())
    if check is not None:
        record.redact.write_text(record.path / checks.SESSION_COPY, check)
    return LoopResult(
        session_id=record.session_id, prompt=intent, env_id=config.env_id, status="running",
        scored_by="judges" if check is None else "check",
    )  # fmt: skip


def session_clients(llm: LLMClient | None, vlm: LLMClient | None) -> tuple[LLMClient, Redactor]:
    """The text client (default: the embedded model) and the session's redactor."""
    if llm is None:
        from langmarl.llm.client import LLMClient
        from langmarl.llm.config import LLMConfig

        llm = LLMClient(LLMConfig.from_preset("local"), role="p2p")
    secrets_ = environment_secrets() | llm_secrets([llm.config, vlm.config if vlm else None])
    return llm, Redactor(secrets_)


def execute(session: Session) -> LoopResult:
    """Run ``session`` (its lock held by the caller) and record how it ended."""
    record, result = session.record, session.result
    with redacting_logs(record.redact):
        try:
            session.run()
        except KeyboardInterrupt:
            result.status, result.error = "cancelled", "interrupted"
            _finish(record, result)
            raise
        except Exception as exc:  # the loop's edge: record any failure as a status, never crash
            logger.exception("p2p session %s failed", record.session_id)
            result.status, result.error = "error", f"{type(exc).__name__}: {exc}"
        if session.config.analyze:  # before run_end, so a stream following the run sees it
            from langmarl.p2p.analysis.analyze import analyze_finished

            try:  # never raises an Exception: a failure is in the analysis and its event
                narrator = session.llm if session.writes(session.config.narrative) else None
                analyze_finished(record, result, narrator, session.config.dominance_threshold)
            except KeyboardInterrupt:
                _finish(record, result)
                raise
    _finish(record, result)
    return LoopResult.model_validate_json(record.redact(result.model_dump_json()))


def _finish(record: SessionRecord, result: LoopResult) -> None:
    """Write the final status.json and loop_history.json."""
    record.set_status(result.status, result.error if result.status != "passed" else None)
    record.save_history(result.model_dump())
