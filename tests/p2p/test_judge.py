from pathlib import Path

import numpy as np
import pytest

from langmarl.p2p.agents.judge import (
    judge_run,
    load_trajectory,
    measurements_text,
    run_code_judge,
    trajectory_summary,
)
from langmarl.p2p.agents.synthesis import synthesize
from langmarl.p2p.learner.evaluation import Episode, save_trajectories
from langmarl.p2p.reward.env_specs import get_env_spec
from langmarl.p2p.session.contracts import JudgeScore
from langmarl.testing import ScriptedLLM
from langmarl.testing.scripted import scripted_config


def _episode(seed: int, rewards: list[float]) -> Episode:
    n = len(rewards)
    return Episode(
        seed=seed, obs=[np.zeros(2)] * n, actions=[np.zeros(1)] * n, rewards=rewards,
        env_rewards=rewards, terms={"t": rewards}, infos={"x_velocity": [float(seed)] * n},
    )  # fmt: skip


def test_load_trajectory_picks_the_median_episode(tmp_path: Path):
    path = tmp_path / "trajectory_1.npz"
    save_trajectories(path, [_episode(0, [0.0]), _episode(1, [5.0, 5.0]), _episode(2, [100.0])])
    trajectory = load_trajectory(path)
    assert trajectory["rewards"] == [5.0, 5.0]
    assert trajectory["info"] == {"x_velocity": [1.0, 1.0]}
    summary = trajectory_summary(trajectory)
    assert summary["length"] == 2 and summary["return"] == 10.0
    assert "x_velocity: mean 1" in measurements_text(summary)


def test_synthesize_averages_available_scores():
    scores = [
        JudgeScore(judge="code", score=0.9),
        JudgeScore(judge="summary", score=0.5),
        JudgeScore(judge="vlm", reason="failed"),
    ]
    judgment = synthesize(scores, [], threshold=0.7)
    assert judgment.intent_score == pytest.approx(0.7) and judgment.passed


def test_synthesize_without_scores_fails_honestly():
    judgment = synthesize([JudgeScore(judge="code", reason="crashed")], ["plateau: flat"], 0.5)
    assert judgment.intent_score == 0.0 and not judgment.passed
    assert judgment.failure_tags == ["no_judge_score", "plateau"]
    assert "[code] crashed" in judgment.diagnosis


def test_summary_judge_with_unparseable_reply_gives_no_score():
    trajectory = {"rewards": [1.0], "info": {"x_velocity": [1.0]}, "terms": {}}
    scores = judge_run(
        ScriptedLLM(["it is fine"]), "run", "- run", get_env_spec("HalfCheetah-v5"), trajectory,
        judge_code=None, use_summary=True,
    )  # fmt: skip
    assert scores[0].judge == "summary" and scores[0].score is None


def test_vlm_judge_receives_frames(tmp_path: Path):
    from langmarl.p2p.learner.evaluation import write_video

    video = tmp_path / "v.mp4"
    write_video(video, [np.full((32, 32, 3), i * 20, dtype=np.uint8) for i in range(10)], fps=10)
    vlm = ScriptedLLM(["SCORE: 0.6\nREASON: moves"], config=scripted_config(is_multimodal=True))
    scores = judge_run(
        ScriptedLLM(["unused"]), "run", "- run", get_env_spec("HalfCheetah-v5"), {},
        judge_code=None, use_summary=False, vlm=vlm, video=video,
    )  # fmt: skip
    assert scores == [JudgeScore(judge="vlm", score=0.6, reason="moves")]
    assert "image" in str(vlm.backend.requests[0].messages[-1]["content"])


@pytest.mark.slow
def test_code_judge_runs_in_the_sandbox():
    trajectory = {
        "rewards": [1.0, 2.0],
        "info": {"x_velocity": [-2.0, -4.0]},
        "terms": {},
        "obs": [],
        "actions": [],
    }
    code = (
        "def judge_fn(trajectory, summary):\n"
        '    v = np.mean(trajectory["info"]["x_velocity"])\n'
        '    return {"score": -v / 6, "reason": f"v={v}"}\n'
    )
    assert run_code_judge(code, trajectory) == JudgeScore(judge="code", score=0.5, reason="v=-3.0")
    broken = run_code_judge("def judge_fn(t, s):\n    return 1 / 0\n", trajectory)
    assert broken.score is None and "ZeroDivisionError" in broken.reason
    rejected = run_code_judge("import os\ndef judge_fn(t, s):\n    return 1\n", trajectory)
    assert rejected.score is None and "not allowed" in rejected.reason
