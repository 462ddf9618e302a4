"""Checks: a person's ground truth for an intent (issue 38).

A check is code a person writes (or a capable model, as the code judge is written)::

    def check(trajectory, summary):
        # how well this one episode shows "run backwards", in [0, 1]
        return min(1.0, max(0.0, -summary["info_means"]["x_velocity"] / 3.0))

``trajectory`` is one evaluation episode: ``obs``, ``actions``, ``rewards`` (the reward the
policy was trained on), ``terms`` (that reward's terms) and ``info`` (the env's own values,
``env_reward`` among them), each a list with one entry per step. ``summary`` is its
:func:`~langmarl.p2p.agents.judge.trajectory_summary`: ``length``, ``return``, ``info_means``,
``info_first_last``, ``term_means``, and ``horizon``: the most steps the episode could have
had (a fall that ends it early leaves steps out). ``np`` and ``math`` are there without an
import; other imports are held to reward code's allow-list.

A session with a check (``langmarl p2p run --check FILE``, ``check:`` in its config, or a
``check`` column in a benchmark's cases) keeps a copy of it (``check.py`` in the session
directory, what a resumed session reads) and runs it on every evaluation episode of each
iteration's judged run, confined like the code judge: one sandboxed process (no network, no
writes outside its own directory, capped memory and time); the episodes go in as JSON and the
scores come back as one JSON line. The mean of the episodes' scores is the iteration's score,
with a 95% interval: it picks the best iteration, decides whether the session passes, and is
what the guardrails, the analysis and the final line read. The LLM judges still run and are
recorded beside it (``judge_score``).

A check that crashes, runs past its time, or returns anything but a real number in [0, 1] on
any episode gives no score and says why — never a made-up one.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langmarl.core.errors import ConfigError
from langmarl.core.intervals import score_interval
from langmarl.p2p.agents.judge import load_episodes, synthetic_trajectory, trajectory_summary
from langmarl.p2p.reward.allow_list import code_problems
from langmarl.p2p.reward.env_specs import MujocoEnvSpec
from langmarl.p2p.session.contracts import CheckResult
from langmarl.sandbox import SandboxLimits, run_python

HARNESS = Path(__file__).with_name("_check_harness.py")
SESSION_COPY = "check.py"
"""The name of a session's copy of its check, in the session directory."""
TIMEOUT_S = 60.0
"""Wall-clock limit of one check process (every episode of a run)."""
MEMORY_MB = 1024
SHAPE = "a check is `def check(trajectory, summary)` returning a number in [0, 1]"
DEFAULT_HORIZON = 1000
"""Steps of an episode when the training config sets no ``max_episode_steps``: what
Gymnasium's MuJoCo v5 environments allow."""


def check_problems(source: str) -> list[str]:
    """Why ``source`` is not a check ([] when it is one): its syntax, imports outside the
    allow-list, or no top-level ``check`` function of two positional parameters."""
    problems = [p.replace("in reward code", "in a check") for p in code_problems(source)]
    if problems:
        return problems
    functions = [
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef) and node.name == "check"
    ]
    if not functions:
        return ["it defines no top-level function `check`"]
    arguments = functions[-1].args
    positional = len(arguments.posonlyargs) + len(arguments.args)
    if positional != 2 and not (positional < 2 and arguments.vararg):
        return [f"`check` takes {positional} positional parameters, not 2 (trajectory, summary)"]
    return []


def read_check(path: str | Path) -> str:
    """The source of the check file ``path``.

    Raises:
        ConfigError: one line naming the file, what is wrong and the fix.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"check file {str(path)!r} does not exist: give the path of a .py file")
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"check file {path} cannot be read ({exc}): {SHAPE}") from None
    problems = check_problems(source)
    if problems:
        raise ConfigError(f"check file {path}: {problems[0]}; {SHAPE}")
    return source


def try_check(source: str, spec: MujocoEnvSpec, name: str = "the check") -> None:
    """Run the check on a random episode of ``spec``'s shapes: it must give a score there too,
    so a broken check stops a session before any training.

    Raises:
        ConfigError: naming ``name`` and what the check did.
    """
    episode = synthetic_trajectory(spec)
    result = run_check(source, [episode], pass_threshold=1.0, horizon=len(episode["rewards"]))
    if result.score is None:
        raise ConfigError(
            f"{name} gives no score on a random {spec.env_id} episode ({result.reason}); {SHAPE} "
            "for any episode"
        )


def episode_input(trajectory: dict[str, Any], horizon: int) -> dict[str, Any]:
    """What the check is called with for one episode."""
    summary = trajectory_summary(trajectory) | {"horizon": horizon}
    return {"trajectory": trajectory, "summary": summary}


def run_check(
    source: str,
    episodes: Sequence[dict[str, Any]],
    pass_threshold: float,
    timeout_s: float = TIMEOUT_S,
    horizon: int = DEFAULT_HORIZON,
) -> CheckResult:
    """Score each of ``episodes`` (trajectories as :func:`~langmarl.p2p.agents.judge.load_episodes`
    gives them) with the check, confined; a score only if every episode got one.

    Never raises for what the check does: a crash, a timeout or a bad value is the result's
    ``reason``.
    """
    if not episodes:
        return CheckResult(reason="the run saved no evaluation episode to check")
    problems = check_problems(source)
    if problems:
        return CheckResult(reason="check code rejected: " + "; ".join(problems))
    files = {
        "check.py": source,
        "episodes.json": json.dumps([episode_input(e, horizon) for e in episodes]),
    }
    limits = SandboxLimits(timeout_s=timeout_s, memory_mb=MEMORY_MB)
    result = run_python(HARNESS.read_text(encoding="utf-8"), limits=limits, files=files)
    if result.timed_out:
        return CheckResult(reason=f"the check did not finish within {timeout_s:g} s")
    try:
        report = json.loads(result.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return CheckResult(reason=f"the check crashed: {result.stderr.strip()[-300:]}")
    if not isinstance(report, dict) or not report.get("ok"):
        error = report.get("error") if isinstance(report, dict) else report
        return CheckResult(reason=f"the check failed: {str(error)[:300]}")
    return _scored(report.get("scores"), len(episodes), pass_threshold)


def score_run(
    source: str, trajectory: Path | None, pass_threshold: float, horizon: int | None
) -> CheckResult:
    """The check on every evaluation episode a run saved (``trajectory``: its latest
    ``trajectory_<step>.npz``; None, or an older ``.jsonl``, gives no score)."""
    if trajectory is None or trajectory.suffix != ".npz":
        return CheckResult(reason="the judged run saved no evaluation episodes")
    return run_check(source, load_episodes(trajectory), pass_threshold,
                     horizon=horizon or DEFAULT_HORIZON)  # fmt: skip


def _scored(scores: Any, expected: int, pass_threshold: float) -> CheckResult:
    """The result of the harness's ``scores``, held to what the harness promises (the line
    may have been printed by the check itself)."""
    valid = (
        isinstance(scores, list)
        and len(scores) == expected
        and all(
            isinstance(s, int | float) and not isinstance(s, bool) and 0.0 <= s <= 1.0
            for s in scores
        )
    )
    if not valid:
        return CheckResult(reason=f"the check reported {str(scores)[:200]}, not {expected} scores")
    values = [float(s) for s in scores]
    interval = score_interval(values, bounds=(0.0, 1.0))
    return CheckResult(
        score=interval.mean,
        passed=interval.mean >= pass_threshold,
        episodes=values,
        interval=interval,
    )


def describe(result: CheckResult) -> str:
    """One line for people and for the reviser: the check's score with its interval and each
    episode's, or why there is none."""
    if result.score is None or result.interval is None:
        return f"check: no score ({result.reason})"
    interval = result.interval
    bounds = "" if interval.low is None else f", 95% CI [{interval.low:.2f}, {interval.high:.2f}]"
    each = ", ".join(f"{value:.2f}" for value in result.episodes)
    return f"check: {result.score:.2f} over {interval.n} episodes{bounds} (each: {each})"
