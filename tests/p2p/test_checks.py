"""Checks (issue 38): a person's ground truth for an intent, run confined on every evaluation
episode; a check that misbehaves gives no score and says why. And the shipped cases: each
intent has a check and a person-written reference reward."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from langmarl.core.errors import ConfigError
from langmarl.p2p.agents.judge import synthetic_trajectory
from langmarl.p2p.bench.cases import read_cases
from langmarl.p2p.design.checks import describe, read_check, run_check, try_check
from langmarl.p2p.reward.env_specs import get_env_spec
from langmarl.p2p.reward.validation import validate_reward_code

CASES = Path(__file__).resolve().parents[2] / "configs" / "p2p" / "cases.csv"
BACKWARDS = """
def check(trajectory, summary):
    return min(1.0, max(0.0, -summary["info_means"]["x_velocity"]))
"""


def episode(velocity: float, steps: int = 20, angle: float = 0.0) -> dict[str, Any]:
    """A HalfCheetah episode moving at ``velocity`` with its torso at ``angle``."""
    spec = get_env_spec("HalfCheetah-v5")
    trajectory = synthetic_trajectory(spec, steps)
    trajectory["info"]["x_velocity"] = [velocity] * steps
    trajectory["obs"] = [[0.0, angle] + [0.0] * (spec.obs_dim - 2) for _ in range(steps)]
    return trajectory


def test_a_check_scores_every_episode_and_reports_their_mean_with_an_interval() -> None:
    result = run_check(BACKWARDS, [episode(-0.2), episode(-0.6), episode(-2.0)], 0.5)
    assert result.episodes == pytest.approx([0.2, 0.6, 1.0])
    assert result.score == pytest.approx(0.6) and result.passed
    assert result.interval is not None and result.interval.n == 3
    assert result.interval.low is not None and result.interval.low < 0.6 < result.interval.high
    assert describe(result).startswith("check: 0.60 over 3 episodes, 95% CI [")
    assert not run_check(BACKWARDS, [episode(-0.2)], 0.5).passed


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("raise ValueError('no velocity')", r"episode 1: ValueError: no velocity \(line 4\)"),
        ("return float('nan')", "episode 1: check returned nan, not a finite number"),
        ("return 1.5", "episode 1: check returned 1.5, outside"),
        ("return -0.25", "episode 1: check returned -0.25, outside"),
        ("return True", r"returned True \(bool\), not a number"),
        ("return '0.5'", r"returned '0.5' \(str\), not a number"),
        ("return None", "returned None"),
    ],
)
def test_a_check_that_misbehaves_on_any_episode_gives_no_score_and_says_why(
    body: str, reason: str
) -> None:
    source = (
        "def check(trajectory, summary):\n"
        "    if summary['info_means']['x_velocity'] > -1:\n"
        "        return 0.5\n"
        f"    {body}\n"
    )
    result = run_check(source, [episode(-0.5), episode(-3.0)], 0.1)
    assert result.score is None and result.interval is None and not result.passed
    assert result.episodes == []
    assert result.reason.startswith("the check failed: "), result.reason
    assert re.search(reason, result.reason), result.reason
    assert describe(result).startswith("check: no score (the check failed: episode 1")


def test_a_check_cannot_forge_the_harness_line() -> None:
    """The harness prints its own line last; the ways out before it are refused unrun."""
    printed = 'def check(trajectory, summary):\n    print(\'{"ok": true, "scores": [1]}\')\n'
    result = run_check(printed + "    return 0.25\n", [episode(-1.0)], 0.1)
    assert result.score == 0.25
    for way_out in ("raise SystemExit(0)", "exit(0)", "raise KeyboardInterrupt"):
        refused = run_check(printed + f"    {way_out}\n", [episode(-1.0)], 0.1)
        assert refused.score is None and "is not allowed in a check" in refused.reason


def test_a_check_that_never_returns_is_stopped() -> None:
    looping = "def check(trajectory, summary):\n    while True:\n        pass\n"
    result = run_check(looping, [episode(-1.0)], 0.1, timeout_s=1)  # it spins till then
    assert result.score is None and result.reason == "the check did not finish within 1 s"


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("import os\ndef check(t, s):\n    return 1.0\n", "import of 'os' is not allowed"),
        ("def check(t):\n    return 1.0\n", "takes 1 positional parameters, not 2"),
        ("def judge(t, s):\n    return 1.0\n", "defines no top-level function `check`"),
        ("def check(t, s):\n    return (\n", "syntax error on line 2"),
    ],
)
def test_a_file_that_is_not_a_check_is_one_clear_error_line(
    tmp_path: Path, source: str, problem: str
) -> None:
    path = tmp_path / "my_check.py"
    path.write_text(source)
    with pytest.raises(ConfigError) as raised:
        read_check(path)
    message = str(raised.value)
    assert message.startswith(f"check file {path}: ") and problem in message
    assert "\n" not in message and "def check(trajectory, summary)" in message
    assert run_check(source, [episode(-1.0)], 0.1).reason.startswith("check code rejected")


def test_a_missing_check_file_and_one_that_fails_on_any_episode_are_refused(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError, match=r"check file .*none\.py' does not exist"):
        read_check(tmp_path / "none.py")
    unclipped = "def check(trajectory, summary):\n    return summary['return']\n"
    with pytest.raises(ConfigError, match=r"gives no score on a random HalfCheetah-v5 episode"):
        try_check(unclipped, get_env_spec("HalfCheetah-v5"), "check file x.py")
    try_check(BACKWARDS, get_env_spec("HalfCheetah-v5"))  # gives a score: no error


def test_every_shipped_case_has_a_check_and_a_reference_reward() -> None:
    """At least 8 intents over at least 4 environments, each with a check that scores a
    random episode and a person-written reward that validates (in the sandbox)."""
    cases = read_cases(CASES)
    assert len({c.instruction for c in cases}) >= 8 and len({c.env_id for c in cases}) >= 4
    for case in cases:
        spec = get_env_spec(case.env_id)
        try_check(read_check(case.check), spec, case.check)
        validation = validate_reward_code(Path(case.reference).read_text(), case.env_id)
        assert validation.ok, (case.reference, validation.message())


@pytest.mark.parametrize(
    ("name", "met", "missed"),
    [
        ("halfcheetah_backwards", episode(-1.2), episode(1.2)),
        ("halfcheetah_forward", episode(1.2), episode(-1.2)),
        ("halfcheetah_stand_still", episode(0.0), episode(0.8)),
        ("halfcheetah_stand_still", episode(0.0), episode(0.0, angle=3.0)),  # lying on its back
    ],
)
def test_the_shipped_checks_tell_the_intent_from_its_opposite(
    name: str, met: dict[str, Any], missed: dict[str, Any]
) -> None:
    source = read_check(CASES.parent / "checks" / f"{name}.py")
    assert run_check(source, [met], 0.5).score == 1.0
    assert run_check(source, [missed], 0.5).score == 0.0


def test_a_fall_counts_against_the_hopper_over_the_whole_horizon() -> None:
    source = read_check(CASES.parent / "checks" / "hopper_forward.py")
    spec = get_env_spec("Hopper-v5")
    fast_then_fell = synthetic_trajectory(spec, 100)
    fast_then_fell["info"]["x_velocity"] = [2.0] * 100
    assert run_check(source, [fast_then_fell], 0.5, horizon=1000).score == pytest.approx(0.2)
    assert run_check(source, [fast_then_fell], 0.5, horizon=100).score == 1.0


def test_a_benchmark_case_names_its_check_relative_to_the_cases_file(tmp_path: Path) -> None:
    from pydantic import ValidationError

    from langmarl.p2p.bench.cases import BenchConfig

    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "back.py").write_text(BACKWARDS)
    cases = tmp_path / "cases.csv"
    cases.write_text("env_id,instruction,check\nHalfCheetah-v5,run backwards,checks/back.py\n")
    config = BenchConfig(cases=str(cases), runs_dir=str(tmp_path / "runs"))
    (case,) = config.case_list()
    assert case.check == str(tmp_path / "checks" / "back.py")
    assert config.case_session(case, tmp_path).check == case.check  # the session's check
    cases.write_text("env_id,instruction,check\nHalfCheetah-v5,run backwards,checks/none.py\n")
    with pytest.raises(ValidationError, match=r"cases\[0\]\.check: check file .*none\.py"):
        BenchConfig(cases=str(cases))
