"""Judging a trained policy against the intent: code judge, VLM judge, summary judge, synthesis.

* **code judge**: an LLM-written ``judge_fn(trajectory, summary)`` (written once per session),
  run in the sandbox on the median evaluation episode;
* **VLM judge**: frames of the median episode's video, when a multimodal model is configured;
* **summary judge**: the LLM reads the episode's measurements (info means, term means).

The judges of an iteration run concurrently (at most ``workers`` at once); a judge that fails
gives no score (and says why) rather than a made-up one. Their verdicts become one judgment
in :mod:`langmarl.p2p.agents.synthesis`.
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from langmarl.core.errors import LLMError, ParseError
from langmarl.p2p.agents import prompts
from langmarl.p2p.agents.parsing import extract_code, parse_score
from langmarl.p2p.agents.video import video_frames
from langmarl.p2p.reward.allow_list import code_problems
from langmarl.p2p.reward.env_specs import MujocoEnvSpec
from langmarl.p2p.session.contracts import JudgeScore
from langmarl.sandbox import SandboxLimits, run_python

if TYPE_CHECKING:
    from langmarl.llm.client import LLMClient

logger = logging.getLogger(__name__)
HARNESS = Path(__file__).with_name("_judge_harness.py")


def _episode(data: Any, index: int, max_steps: int) -> dict[str, Any]:
    """Episode ``index`` of a loaded trajectory file, as JSON-ready lists."""
    prefix = f"ep{index}_"

    def take(key: str) -> list[Any]:
        return np.round(data[key][:max_steps], 5).tolist()

    keys = [k for k in data.files if k.startswith(prefix)]
    return {
        "obs": take(prefix + "obs"),
        "actions": take(prefix + "actions"),
        "rewards": take(prefix + "rewards"),
        "terms": {k[len(prefix) + 5 :]: take(k) for k in keys if k.startswith(prefix + "term_")},
        "info": {k[len(prefix) + 5 :]: take(k) for k in keys if k.startswith(prefix + "info_")},
    }


def load_trajectory(npz_path: Path, max_steps: int = 1000) -> dict[str, Any]:
    """The median-return episode of a saved checkpoint, as JSON-ready lists."""
    with np.load(npz_path) as data:  # arrays only: no pickle is ever loaded
        returns = data["returns"]
        index = int(np.argmin(np.abs(returns - np.median(returns))))
        return _episode(data, index, max_steps)


def load_episodes(npz_path: Path, max_steps: int = 1000) -> list[dict[str, Any]]:
    """Every evaluation episode of a saved checkpoint, in order, as JSON-ready lists."""
    with np.load(npz_path) as data:
        return [_episode(data, index, max_steps) for index in range(len(data["returns"]))]


def trajectory_summary(trajectory: dict[str, Any]) -> dict[str, Any]:
    """Length, return, per-step means of info values and terms, and info first/last values."""
    info = trajectory.get("info", {})
    return {
        "length": len(trajectory.get("rewards", [])),
        "return": float(np.sum(trajectory.get("rewards", []))),
        "info_means": {k: float(np.mean(v)) for k, v in info.items() if v},
        "info_first_last": {k: [float(v[0]), float(v[-1])] for k, v in info.items() if v},
        "term_means": {k: float(np.mean(v)) for k, v in trajectory.get("terms", {}).items() if v},
    }


def measurements_text(summary: dict[str, Any]) -> str:
    """A few lines of numbers for prompts."""
    lines = [f"episode length {summary['length']}, return {summary['return']:.3g}"]
    for key, mean in summary["info_means"].items():
        first, last = summary["info_first_last"][key]
        lines.append(f"{key}: mean {mean:.3g}, start {first:.3g}, end {last:.3g}")
    return "\n".join(lines)


def synthetic_trajectory(spec: MujocoEnvSpec, steps: int = 50) -> dict[str, Any]:
    """A random trajectory with ``spec``'s shapes, to try judge code on before real data."""
    rng = np.random.default_rng(0)
    return {
        "obs": rng.normal(size=(steps, spec.obs_dim)).round(3).tolist(),
        "actions": rng.uniform(-1, 1, size=(steps, spec.act_dim)).round(3).tolist(),
        "rewards": rng.normal(size=steps).round(3).tolist(),
        "terms": {"main": rng.normal(size=steps).round(3).tolist()},
        "info": {
            k: rng.normal(size=steps).round(3).tolist() for k in (*spec.info_keys, "env_reward")
        },
    }


def run_code_judge(code: str, trajectory: dict[str, Any], timeout_s: float = 20.0) -> JudgeScore:
    """Run ``judge_fn`` in the sandbox; a failure gives ``score=None`` and the reason."""
    problems = code_problems(code)
    if problems:
        return JudgeScore(judge="code", reason="judge code rejected: " + "; ".join(problems))
    files = {
        "judge_fn.py": code,
        "trajectory.json": json.dumps(trajectory),
        "summary.json": json.dumps(trajectory_summary(trajectory)),
    }
    result = run_python(
        HARNESS.read_text(encoding="utf-8"),
        limits=SandboxLimits(timeout_s=timeout_s, memory_mb=1024),
        files=files,
    )
    if result.timed_out:
        return JudgeScore(judge="code", reason=f"judge_fn did not finish within {timeout_s:.0f}s")
    try:
        report = json.loads(result.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return JudgeScore(judge="code", reason=f"judge_fn crashed: {result.stderr.strip()[-200:]}")
    if not isinstance(report, dict) or not report.get("ok"):
        error = report.get("error") if isinstance(report, dict) else report
        return JudgeScore(judge="code", reason=f"judge_fn failed: {str(error)[:300]}")
    # the line may have been printed by judge_fn itself: held to what the harness promises
    score = report.get("score")
    if not isinstance(score, int | float) or isinstance(score, bool) or not math.isfinite(score):
        return JudgeScore(judge="code", reason=f"judge_fn reported score {score!r}, not a number")
    reason = str(report.get("reason", ""))[:500]
    return JudgeScore(judge="code", score=min(1.0, max(0.0, float(score))), reason=reason)


def author_judge(
    llm: LLMClient, intent: str, criteria: str, spec: MujocoEnvSpec, max_fix_attempts: int = 1
) -> tuple[str | None, list[str]]:
    """Write a ``judge_fn`` and check it on a synthetic trajectory; ``(code or None, errors)``."""
    from langmarl.p2p.agents.author import env_fields

    user = prompts.JUDGE_AUTHOR_USER.format(intent=intent, criteria=criteria, **env_fields(spec))
    errors: list[str] = []
    for attempt in range(max_fix_attempts + 1):
        if attempt:
            user += f"\nYour previous judge_fn failed: {errors[-1]}. Write a corrected one."
        try:
            code = extract_code(llm.chat(prompts.JUDGE_AUTHOR_SYSTEM, user), "judge_fn")
        except ParseError as exc:
            errors.append(str(exc)[:200])
            continue
        trial = run_code_judge(code, synthetic_trajectory(spec))
        if trial.score is not None:
            return code, errors
        errors.append(trial.reason)
    return None, errors


def summary_judge(
    llm: LLMClient, intent: str, criteria: str, spec: MujocoEnvSpec, summary: dict[str, Any]
) -> JudgeScore:
    """The LLM scores the measurements; an unparseable reply gives no score."""
    user = prompts.SUMMARY_JUDGE_USER.format(
        env_id=spec.env_id, env_description=spec.description, intent=intent,
        criteria=criteria, measurements=measurements_text(summary),
    )  # fmt: skip
    reply = llm.chat(prompts.SUMMARY_JUDGE_SYSTEM, user)
    try:
        score, reason = parse_score(reply)
    except ParseError as exc:
        return JudgeScore(judge="summary", reason=str(exc)[:200])
    return JudgeScore(judge="summary", score=score, reason=reason)


def vlm_judge(vlm: LLMClient, intent: str, criteria: str, video: Path) -> JudgeScore:
    """A multimodal model scores frames of ``video`` (no score, and why, when they cannot
    be read)."""
    user = prompts.VLM_JUDGE_USER.format(intent=intent, criteria=criteria)
    try:
        images = video_frames(video)
    except ValueError as exc:
        return JudgeScore(judge="vlm", reason=f"no frames: {exc}"[:200])
    reply = vlm.chat(prompts.VLM_JUDGE_SYSTEM, user, images=list(images))
    try:
        score, reason = parse_score(reply)
    except ParseError as exc:
        return JudgeScore(judge="vlm", reason=str(exc)[:200])
    return JudgeScore(judge="vlm", score=score, reason=reason)


def judge_run(
    llm: LLMClient,
    intent: str,
    criteria: str,
    spec: MujocoEnvSpec,
    trajectory: dict[str, Any],
    *,
    judge_code: str | None,
    use_summary: bool,
    vlm: LLMClient | None = None,
    video: Path | None = None,
    workers: int = 3,
) -> list[JudgeScore]:
    """Run every configured judge on one episode, at most ``workers`` at once; a judge's LLM
    error becomes its reason. The scores come in a fixed order: code, summary, vlm."""
    from concurrent.futures import ThreadPoolExecutor

    scores = []
    calls: list[tuple[str, Any]] = []
    if judge_code is not None:
        calls.append(("code", lambda: run_code_judge(judge_code, trajectory)))
    if use_summary:
        calls.append(
            (
                "summary",
                lambda: summary_judge(llm, intent, criteria, spec, trajectory_summary(trajectory)),
            )
        )
    if vlm is not None and video is not None and video.is_file():
        if vlm.config.is_multimodal:
            calls.append(("vlm", lambda: vlm_judge(vlm, intent, criteria, video)))
        else:
            scores.append(JudgeScore(judge="vlm", reason=f"{vlm.config.name!r} is not multimodal"))

    def verdict(name: str, call: Any) -> JudgeScore:
        try:
            return call()
        except LLMError as exc:
            return JudgeScore(judge=name, reason=f"LLM call failed: {exc.cause[:200]}")

    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="judge") as pool:
        found = list(pool.map(lambda named: verdict(*named), calls))
    order = {"code": 0, "summary": 1, "vlm": 2}
    return sorted([*found, *scores], key=lambda s: order.get(s.judge, 3))
