"""Held-out evaluation of weight-space agents: untrained vs trained, greedy, with intervals.

``heldout_scores`` decodes one greedy completion per agent per turn for every held-out
example and returns each example's return; ``HeldoutReport`` pairs the scores of the agents
before and after training (same examples, same decoding) and is what ``heldout.json`` in the
run directory holds. :func:`evaluate_checkpoint` makes one for a run directory;
:func:`evaluate_weights` is the weight-space kinds' ``evaluate`` entry point
(:mod:`langmarl.store.kinds`), whose report ``langmarl eval`` and ``langmarl magrpo eval``
render.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from langmarl.core.errors import ConfigError
from langmarl.core.intervals import ScoreInterval, heldout_line, score_interval
from langmarl.store.kinds import EvalRequest
from langmarl.store.run import RunDir

if TYPE_CHECKING:
    from langmarl.magrpo.base import WeightSpaceTrainer

HELDOUT_FILE = "heldout.json"
"""Written into the run directory: a :class:`HeldoutReport`."""
SHOWN_SAMPLES = 5
"""Examples whose completions are kept in the report, so a reader sees what changed."""


class HeldoutScore(BaseModel):
    """Greedy returns of one set of agents on the held-out examples."""

    model_config = ConfigDict(extra="forbid")

    label: str
    """What was evaluated: ``untrained`` or a checkpoint name."""
    interval: ScoreInterval
    """Mean return with its 95% interval and n."""
    returns: list[float]
    """One return per held-out example, in order."""
    samples: list[dict[str, Any]]
    """The first examples: prompt, each agent's completions, return."""


class HeldoutReport(BaseModel):
    """Held-out scores before and after training, on the same examples."""

    model_config = ConfigDict(extra="forbid")

    task: str
    """The task's name."""
    before: HeldoutScore
    """The untrained agents."""
    after: HeldoutScore | None = None
    """The trained agents (None until training has ended)."""

    def headline(self) -> str:
        """``Held-out reward: 0.412 → 0.873 (n=30 poster examples, greedy; 95% CI …)``."""
        before = self.before.interval
        if self.after is None:
            return f"Held-out reward (untrained): {before.describe()}"
        return heldout_line(before, self.after.interval, self.task, greedy=True)

    def write(self, run_dir: str | Path) -> Path:
        """Write the report to ``<run_dir>/heldout.json`` (atomically; the samples' texts
        through the run's redactor, as every file of the run)."""
        return RunDir(run_dir).write_json(HELDOUT_FILE, self.model_dump(mode="json"))


def read_report(run_dir: str | Path) -> HeldoutReport | None:
    """The report in ``run_dir`` (None if there is none yet).

    Raises:
        ConfigError: if the file exists but cannot be read.
    """
    path = Path(run_dir) / HELDOUT_FILE
    if not path.is_file():
        return None
    try:
        return HeldoutReport.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ConfigError(
            f"{path} is not a held-out report ({str(exc).splitlines()[0]}): delete it and run "
            "`langmarl magrpo eval` on the run again"
        ) from None


def heldout_scores(
    trainer: WeightSpaceTrainer, data: Sequence[dict[str, Any]], label: str
) -> HeldoutScore:
    """Greedy returns of ``trainer``'s agents on ``data`` (one tree per example, G = 1).

    Raises:
        ConfigError: if ``data`` is empty.
    """
    if not data:
        raise ConfigError(
            "the held-out set is empty: give the task held-out examples (task.num_eval >= 1)"
        )
    roots, _, returns = trainer.greedy_rollouts(data)
    samples = [
        {
            "prompt": str(root.example.get("prompt", "")),
            "completions": list(root.joint_completions(0)),
            "return": value,
        }
        for root, value in zip(roots[:SHOWN_SAMPLES], returns, strict=False)
    ]
    interval = score_interval(returns, bounds=return_bounds(trainer))
    return HeldoutScore(label=label, interval=interval, returns=returns, samples=samples)


def return_bounds(trainer: WeightSpaceTrainer) -> tuple[float, float] | None:
    """The range of a return over ``num_turns`` turns discounted by ``discount``, from the
    task's per-turn reward range (None if the task declares none)."""
    if trainer.reward_range is None:
        return None
    args = trainer.args
    scale = sum(args.discount**turn for turn in range(args.num_turns))
    low, high = trainer.reward_range
    return low * scale, high * scale


def heldout_examples(trainer: WeightSpaceTrainer) -> list[dict[str, Any]]:
    """The run's held-out examples.

    Raises:
        ConfigError: if the run has none.
    """
    if not trainer.eval_dataset:
        raise ConfigError(
            "this run has no held-out examples: set task.num_eval >= 1, or heldout=false"
        )
    return list(trainer.eval_dataset)


def evaluate_checkpoint(
    run_dir: str | Path, checkpoint: str = "latest", num_examples: int | None = None
) -> HeldoutReport:
    """Score the untrained agents and those of ``checkpoint`` (``latest`` or a
    ``checkpoints/step-*`` directory) greedily on the run's first ``num_examples`` held-out
    examples (default: all), and write the report into the run (``heldout.json``).

    Raises:
        ConfigError: if ``run_dir`` is not a weight-space run, has no held-out examples, or
            the checkpoint does not exist.
    """
    from langmarl.magrpo.run import build_magrpo_trainer, load_run_dir

    run = load_run_dir(Path(run_dir))
    trainer = build_magrpo_trainer(run)
    data = heldout_examples(trainer)[:num_examples]
    before = heldout_scores(trainer, data, "untrained")
    trainer.load_checkpoint(checkpoint, for_evaluation=True)
    after = heldout_scores(trainer, data, f"step {trainer.step}")
    report = HeldoutReport(task=run.task.name, before=before, after=after)
    report.write(run_dir)
    return report


def evaluate_weights(run_dir: Path, request: EvalRequest) -> HeldoutReport:
    """A MAGRPO/IAC/MAAC run's untrained vs trained agents on its held-out examples
    (``request.iteration``: the checkpoint of that step, default the newest;
    ``request.episodes``: at most this many examples).

    Raises:
        ConfigError: for a split other than ``test`` (a weight-space task has one held-out
            set), or as :func:`evaluate_checkpoint`.
    """
    if request.split != "test":
        raise ConfigError(
            "a weight-space run is evaluated on its task's held-out examples only: drop --split"
        )
    step = request.iteration
    checkpoint = (
        "latest" if step is None else str(Path(run_dir) / "checkpoints" / f"step-{step:06d}")
    )
    return evaluate_checkpoint(run_dir, checkpoint, request.episodes)


@dataclass(frozen=True)
class WeightDetails:
    """A weight-space run's complete checkpoints and held-out intervals."""

    checkpoints: list[str] = field(default_factory=list)
    """``step-NNNNNN`` directories, oldest first."""
    heldout: dict[str, dict[str, Any] | None] | None = None
    """``before``/``after`` → the interval of ``heldout.json`` (None: no report yet)."""


def weight_details(run: Path) -> WeightDetails:
    """What ``langmarl runs show`` adds for the weight-space run in ``run``. ``heldout.json``
    is read as plain JSON, so a report of an older layout still shows its intervals."""
    checkpoints = sorted(p.name for p in (Path(run) / "checkpoints").glob("step-*"))
    try:
        report = json.loads((Path(run) / HELDOUT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        report = None
    if not isinstance(report, dict):
        return WeightDetails(checkpoints)
    parts = {part: (report.get(part) or {}).get("interval") for part in ("before", "after")}
    return WeightDetails(checkpoints, parts)
