"""A session with a check (issue 38): the check's score picks the best iteration and decides
whether the session passes, the judges are recorded beside it, a check that fails on an
iteration leaves it without a score (and the session goes on), a broken check file stops
the session before it starts, and a resumed session keeps its check. A scripted LLM and a
fake trainer stand in for the model and PPO; the check runs in the real sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from langmarl.core.errors import ConfigError
from langmarl.llm.types import ChatRequest
from langmarl.p2p import SessionRecord
from langmarl.p2p.learner.evaluation import Episode, save_trajectories
from langmarl.testing import ScriptedLLM

from .conftest import FakeTrainer
from .test_loop import _run as _run_pendulum
from .test_loop import replies
from .test_session_resume import Killed, _resume

BACKWARDS = """
def check(trajectory, summary):
    speed = -summary["info_means"]["x_velocity"]
    if speed > 5:
        raise ValueError("faster than any cheetah")
    return min(1.0, max(0.0, speed))
"""


class Velocities(FakeTrainer):
    """A FakeTrainer whose iteration ``i`` saves three episodes moving at ``velocities[i]``;
    it dies (SIGKILL's stand-in) on call ``kill_on``."""

    def __init__(self, velocities: list[float], kill_on: int = 0) -> None:
        super().__init__()
        self.velocities, self.kill_on = velocities, kill_on

    def __call__(self, it, reward, configs, seeds):
        if len(self.calls) + 1 == self.kill_on:
            self.calls.append((reward.read_text(), configs[0]))
            raise Killed
        aggregation = super().__call__(it, reward, configs, seeds)
        velocity = self.velocities[len(self.calls) - 1]
        episodes = []
        for seed in range(3):
            episode = Episode(seed=seed, obs=[np.zeros(4)] * 4, actions=[np.zeros(1)] * 4)
            episode.rewards = episode.env_rewards = [1.0] * 4
            episode.terms = {"upright": [1.0] * 4}
            episode.infos = {"x_velocity": [velocity - 0.01 * seed] * 4}
            episodes.append(episode)
        save_trajectories(it.path / "trajectory_100.npz", episodes)
        return aggregation


def judged(scores: list[str]):
    """Replies whose summary judge gives ``scores`` in turn (then the last one)."""
    given: list[str] = []

    def reply(request: ChatRequest) -> str:
        if "SCORE" in str(request.messages[0]["content"]):
            given.append(scores[min(len(given), len(scores) - 1)])
            return given[-1]
        return replies("SCORE: 0.1")(request)

    return reply


def _run(tmp_path: Path, llm: ScriptedLLM, **config):
    """A session on HalfCheetah-v5 (the check reads its x velocity)."""
    return _run_pendulum(tmp_path, llm, env_id="HalfCheetah-v5", **config)


def check_file(tmp_path: Path, source: str = BACKWARDS) -> str:
    path = tmp_path / "my_check.py"
    path.write_text(source)
    return str(path)


def test_the_check_picks_the_best_iteration_and_the_judges_are_recorded_beside(
    tmp_path: Path,
) -> None:
    llm = ScriptedLLM(judged(["SCORE: 0.2", "SCORE: 0.3", "SCORE: 0.6"]))
    result, _, session = _run(
        tmp_path / "runs", llm, trainer=Velocities([-0.2, -0.9, -0.5]),
        check=check_file(tmp_path), pass_threshold=0.95,
    )  # fmt: skip
    assert result.status == "max_iterations" and result.scored_by == "check"
    assert [s.intent_score for s in result.iterations] == pytest.approx([0.21, 0.91, 0.51])
    assert [s.judge_score for s in result.iterations] == pytest.approx([0.2, 0.3, 0.6])
    assert result.best_iteration == 2 and result.best_score == pytest.approx(0.91)  # judges: 3
    best = result.iterations[1]
    assert best.interval is not None and best.interval.n == 3
    assert best.interval.low is not None and best.interval.low < 0.91 < best.interval.high
    outcome = session.iteration(2).read_outcome()
    assert outcome is not None and outcome.check is not None
    assert outcome.check.episodes == pytest.approx([0.9, 0.91, 0.92])
    assert outcome.judgment.intent_score == pytest.approx(0.3)  # the judges' verdict, kept
    assert outcome.measurements.startswith("check: 0.91 over 3 episodes")  # the reviser sees it
    events = session.run.events()
    assert [e["score"] for e in events if e["event"] == "checked"] == pytest.approx(
        [0.21, 0.91, 0.51]
    )
    metrics = (session.path / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(m)["intent_score"] for m in metrics] == pytest.approx([0.21, 0.91, 0.51])
    assert (session.path / "check.py").read_text() == BACKWARDS


def test_the_check_decides_whether_the_session_passes(tmp_path: Path) -> None:
    confident_judges = ScriptedLLM(judged(["SCORE: 0.95"]))
    result, trainer, _ = _run(
        tmp_path / "a", confident_judges, trainer=Velocities([-0.1, -0.8]),
        check=check_file(tmp_path),
    )  # fmt: skip
    assert result.status == "passed" and len(trainer.calls) == 2  # not at the judges' 0.95
    assert result.iterations[-1].intent_score == pytest.approx(0.81)


def test_an_iteration_the_check_cannot_score_has_no_score_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    llm = ScriptedLLM(judged(["SCORE: 0.9", "SCORE: 0.2"]))
    result, _, session = _run(
        tmp_path / "runs", llm, trainer=Velocities([-6.0, -0.5]),
        check=check_file(tmp_path), max_iterations=2,
    )  # fmt: skip
    first, second = result.iterations
    assert first.intent_score is None and first.judged and first.judge_score == 0.9
    assert second.intent_score == pytest.approx(0.51) and result.best_iteration == 2
    assert result.status == "max_iterations"  # the judges' 0.9 passed nothing
    outcome = session.iteration(1).read_outcome()
    assert outcome is not None and outcome.check is not None and outcome.check.score is None
    assert "episode 0: ValueError: faster than any cheetah" in outcome.check.reason
    assert outcome.measurements.startswith("check: no score (the check failed: episode 0")
    analyzed = [e for e in session.run.events() if e["event"] == "analyzed"]
    assert analyzed and analyzed[0]["error"] is None and analyzed[0]["best_iteration"] == 2


def test_a_resumed_session_keeps_its_check_and_trains_no_judged_iteration_again(
    tmp_path: Path,
) -> None:
    path = check_file(tmp_path)
    with pytest.raises(Killed):
        _run(tmp_path / "runs", ScriptedLLM(judged(["SCORE: 0.2"])),
             trainer=Velocities([-6.0, -0.5], kill_on=2), check=path,
             max_iterations=2)  # fmt: skip
    (session_dir,) = (tmp_path / "runs").iterdir()
    Path(path).write_text("def check(trajectory, summary):\n    return 0.0\n")  # changed since
    trainer = Velocities([-0.5])
    result = _resume(SessionRecord(session_dir), trainer, ScriptedLLM(judged(["SCORE: 0.2"])))
    assert len(trainer.calls) == 1  # iteration 1 (judged, no check score) is not trained again
    assert [s.intent_score for s in result.iterations] == [None, pytest.approx(0.51)]
    assert result.scored_by == "check" and result.best_iteration == 2


def test_a_broken_check_file_stops_the_session_before_it_starts(tmp_path: Path) -> None:
    broken = check_file(tmp_path, "def check(trajectory, summary):\n    return summary['return']\n")
    trainer = Velocities([-1.0])
    with pytest.raises(ConfigError, match=r"check file .*my_check\.py gives no score on a random"):
        _run(tmp_path / "runs", ScriptedLLM(judged(["SCORE: 0.2"])), trainer=trainer,
             check=broken)  # fmt: skip
    assert not (tmp_path / "runs").exists() and trainer.calls == []


def test_the_cli_reports_a_broken_check_in_one_line(tmp_path: Path) -> None:
    from langmarl.cli import build_app

    check = check_file(tmp_path, "def check(trajectory):\n    return 1.0\n")
    args = ["p2p", "run", "balance", "--env", "InvertedPendulum-v5", "--check", check,
            "--runs-dir", str(tmp_path / "runs")]  # fmt: skip
    result = CliRunner().invoke(build_app(), args)
    assert isinstance(result.exception, ConfigError)
    assert str(result.exception) == (
        f"check file {check}: `check` takes 1 positional parameters, not 2 (trajectory, "
        "summary); a check is `def check(trajectory, summary)` returning a number in [0, 1]"
    )
    assert not (tmp_path / "runs").exists()


def test_the_final_line_gives_the_check_and_the_judges_beside(tmp_path: Path) -> None:
    import re

    from langmarl.cli.p2p_commands import _check_line

    mute = ScriptedLLM(judged(["I cannot say."]))  # the judge's reply holds no SCORE
    result, _, _ = _run(tmp_path / "a", mute, trainer=Velocities([-0.5]),
                        check=check_file(tmp_path), max_iterations=1)  # fmt: skip
    assert result.iterations[0].judge_score is None  # not the synthesis's 0.0
    line = r"Intent score \(check\): 0\.51 at iter_1 \(n=3 episodes; 95% CI \[0\.\d\d, 0\.\d\d\]; "
    assert re.fullmatch(line + r"judges: no score\)", _check_line(result))
    result, _, _ = _run(tmp_path / "b", ScriptedLLM(judged(["SCORE: 0.4"])),
                        trainer=Velocities([-0.5]), check=check_file(tmp_path),
                        max_iterations=1)  # fmt: skip
    assert re.fullmatch(line + r"judges 0\.40\)", _check_line(result))


def test_a_baseline_scores_the_envs_own_reward_first_and_the_last_line_compares(
    tmp_path: Path,
) -> None:
    import re

    from langmarl.cli.p2p_commands import _check_line

    trainer = Velocities([0.5, -0.9])  # the env's own reward runs forward; iteration 1 back
    result, _, session = _run(tmp_path / "runs", ScriptedLLM(judged(["SCORE: 0.2"])),
                              trainer=trainer, check=check_file(tmp_path), baseline=True,
                              max_iterations=1)  # fmt: skip
    assert "forward" in trainer.calls[0][0] and "Fallback template" in trainer.calls[0][0]
    assert result.baseline is not None and result.baseline.score == 0.0
    assert (session.path / "baseline" / "reward_fn.py").is_file()
    assert [s.iteration for s in result.iterations] == [1]  # the baseline is no iteration
    line = _check_line(result)
    assert re.fullmatch(
        r"Intent score: 0\.00 → 0\.91 \(n=3 episodes, check; 95% CI \[0\.00, 0\.\d\d\] → "
        r"\[0\.\d\d, 0\.\d\d\]; the env's own reward → iter_1; judges 0\.20\)",
        line,
    ), line


def test_a_killed_baseline_is_trained_again_and_a_finished_one_is_kept(tmp_path: Path) -> None:
    path = check_file(tmp_path)
    with pytest.raises(Killed):  # killed while training the baseline
        _run(tmp_path / "a", ScriptedLLM(judged(["SCORE: 0.2"])),
             trainer=Velocities([0.5], kill_on=1), check=path, baseline=True)  # fmt: skip
    (session_dir,) = (tmp_path / "a").iterdir()
    trainer = Velocities([0.5, -0.9])
    result = _resume(SessionRecord(session_dir), trainer, ScriptedLLM(judged(["SCORE: 0.2"])))
    assert len(trainer.calls) == 2 and result.baseline is not None  # baseline, then iter_1
    with pytest.raises(Killed):  # killed in iteration 1, after the baseline
        _run(tmp_path / "b", ScriptedLLM(judged(["SCORE: 0.2"])),
             trainer=Velocities([0.5], kill_on=2), check=path, baseline=True)  # fmt: skip
    (session_dir,) = (tmp_path / "b").iterdir()
    trainer = Velocities([-0.9])
    result = _resume(SessionRecord(session_dir), trainer, ScriptedLLM(judged(["SCORE: 0.2"])))
    assert len(trainer.calls) == 1 and "Fallback template" not in trainer.calls[0][0]
    assert result.baseline is not None and result.baseline.score == 0.0


def test_a_baseline_needs_a_check() -> None:
    from langmarl.p2p.session.loop import LoopConfig

    with pytest.raises(ValueError, match="baseline is true but no check is set"):
        LoopConfig(baseline=True)
