"""The reviser's look-back tools on the records of a session built on disk."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from langmarl.core.files import append_jsonl
from langmarl.p2p.agents.lookback import TOOLS, Lookback, call_tool, tool_specs
from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.session.contracts import (
    EvalCheckpoint,
    IterationAggregation,
    IterationOutcome,
    JudgeScore,
    JudgmentResult,
    RewardSpec,
    TrainSummary,
)
from langmarl.p2p.session.records import IterationInputs, SessionRecord

VIDEO = "eval_100_median.mp4"


def reward_source(number: int) -> str:
    return (
        f"def reward_fn(obs, action, next_obs, info):\n    return {number}.0, {{}}  # v{number}\n"
    )


@functools.cache
def video_bytes() -> bytes:
    """A real 8-frame mp4 (made once per process)."""
    import tempfile

    import imageio.v2 as imageio
    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / VIDEO
        frames = [np.full((32, 32, 3), 30 * i, dtype=np.uint8) for i in range(8)]
        imageio.mimwrite(path, frames, fps=10, macro_block_size=1)
        return path.read_bytes()


def build_session(root: Path, iterations: int = 2, video: bool = False) -> SessionRecord:
    """A session with ``iterations`` trained and judged iterations; iteration ``n`` scores
    ``0.1 * n`` and returns ``3 * n``; iteration 1 has a median video when ``video``."""
    session = SessionRecord(root / "session_x")
    for n in range(1, iterations + 1):
        it = session.new_iteration(n)
        origin = "author" if n == 1 else "revision"
        inputs = IterationInputs(reward_source(n), RewardSpec(origin=origin), TrainConfig())
        it.save_inputs("run", inputs)
        checkpoint = EvalCheckpoint(
            step=100, mean_return=3.0 * n, p10_return=1.0, median_return=2.5, p90_return=4.0,
            mean_env_return=5.0, mean_length=50.0, videos={"median": VIDEO},
        )  # fmt: skip
        it.save_summary(
            TrainSummary(
                env_id="HalfCheetah-v5", seed=1, total_timesteps=100, steps_done=100,
                training_time_s=1.0, steps_per_second=100.0, final_episodic_return=3.0 * n,
                final_env_return=5.0, term_means={"speed": 0.5 * n}, checkpoints=[checkpoint],
            )
        )  # fmt: skip
        for step, ret in ((50, 1.0), (100, 2.0)):
            append_jsonl(it.scalars_path, {"type": "train", "step": step, "episodic_return": ret})
        judgment = JudgmentResult(
            intent_score=0.1 * n, diagnosis=f"too slow {n}", failure_tags=["slow"],
            judges=[JudgeScore(judge="summary", score=0.1 * n, reason="barely moves")],
        )  # fmt: skip
        it.save_judgment(judgment)
        it.save_outcome(IterationOutcome(judgment=judgment, mean_return=3.0 * n))
        if video and n == 1:
            it.videos_dir.mkdir()
            (it.videos_dir / VIDEO).write_bytes(video_bytes())
    return session


@pytest.fixture
def session(tmp_path: Path) -> SessionRecord:
    return build_session(tmp_path)


def test_list_iterations_shows_score_return_origin_and_only_up_to_current(session):
    out = call_tool(Lookback(session, current=2), "list_iterations", {})
    assert out.ok and out.text.splitlines() == [
        "iteration 1: score 0.10, mean return 3.00, reward origin author",
        "iteration 2 (current): score 0.20, mean return 6.00, reward origin revision",
    ]
    assert "iteration 2" not in call_tool(Lookback(session, current=1), "list_iterations", {}).text


def test_read_code_returns_the_iterations_source_and_unknown_iterations_are_answers(session):
    lookback = Lookback(session, current=2)
    out = call_tool(lookback, "read_code", {"iteration": 1})
    assert out.ok and reward_source(1).strip() in out.text and "origin author" in out.text
    missing = call_tool(lookback, "read_code", {"iteration": 7})
    assert not missing.ok and missing.text == "read_code: no iteration 7; iterations are 1..2"


def test_read_metrics_has_term_means_checkpoints_and_the_training_trend(session):
    text = call_tool(Lookback(session, current=2), "read_metrics", {"iteration": 2}).text
    assert 'term means per step {"speed": 1.0}' in text
    assert "100: 6.00 / 1.00 / 2.50 / 4.00, env 5.00, length 50" in text
    assert "training (2 rollouts to step 100): episodic_return 1 -> 2 (max 2)" in text


def test_read_judgment_has_judges_diagnosis_and_tags(session):
    text = call_tool(Lookback(session, current=2), "read_judgment", {"iteration": 1}).text
    assert "score 0.10" in text and "summary 0.10: barely moves" in text
    assert "diagnosis: too slow 1" in text and "tags: slow" in text


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("read_cod", {"iteration": 1}, "no tool 'read_cod'. Did you mean 'read_code'?"),
        ("read_code", {"iter": 1}, "unknown argument 'iter'; Did you mean 'iteration'?"),
        ("read_code", {}, "missing 'iteration'; example: read_code {\"iteration\": 1}"),
        ("read_code", {"iteration": "one"}, "iteration must be an integer, got 'one'"),
        ("view_frames", {"iteration": 1, "count": 60}, "count must be at most 6, got 60"),
    ],
)
def test_bad_calls_are_answered_with_what_to_send(session, name, args, expected):
    out = call_tool(Lookback(session, current=2), name, args)
    assert not out.ok and expected in out.text


def test_numeric_strings_are_accepted_and_answers_are_bounded(session):
    out = call_tool(Lookback(session, current=2, max_chars=40), "read_code", {"iteration": "1"})
    assert out.ok and len(out.text) <= 40 and out.text.endswith("[truncated]")


def test_frames_are_images_for_a_multimodal_model_else_a_note(tmp_path: Path):
    session = build_session(tmp_path, video=True)
    note = call_tool(Lookback(session, current=2), "view_frames", {"iteration": 1})
    assert note.ok and note.images == () and f"videos {VIDEO}" in note.text
    assert "takes no images" in note.text
    shown = call_tool(
        Lookback(session, 2, images=True), "view_frames", {"iteration": 1, "count": 3}
    )
    assert len(shown.images) == 3 and all(i.startswith(b"\x89PNG") for i in shown.images)
    assert shown.text.startswith(f"3 frames of {VIDEO} (step 100, median return 2.50)")
    none = call_tool(Lookback(session, 2, images=True), "view_frames", {"iteration": 2})
    assert not none.ok and "no median video" in none.text


def test_a_multi_run_iteration_is_read_from_its_judged_run(session):
    it = session.iteration(1)
    (it.runs_dir / "seed_2").mkdir(parents=True)
    aggregation = IterationAggregation(best_run="seed_2")
    it.aggregation_path.write_text(aggregation.model_dump_json())
    assert it.judged_run().path == it.runs_dir / "seed_2"
    text = call_tool(Lookback(session, current=2), "read_metrics", {"iteration": 1}).text
    assert "training scalars: none recorded" in text  # seed_2 has no scalars of its own


def test_tool_specs_declare_every_tool_with_an_object_schema():
    specs = tool_specs()
    assert [s.name for s in specs] == list(TOOLS)
    assert all(s.parameters["type"] == "object" for s in specs)
    assert specs[1].openai()["function"]["parameters"]["required"] == ["iteration"]


@pytest.mark.parametrize("escape", ["outside", "absolute", "symlink"])
def test_a_video_name_that_leaves_the_run_is_never_decoded(tmp_path: Path, escape: str):
    """The video's name comes from summary.json, which the confined training process wrote:
    an absolute name, ``..`` or a symlink out of ``videos/`` names no video (issue 39)."""
    session = build_session(tmp_path / "runs", video=True)
    secret = tmp_path / "secret.mp4"
    secret.write_bytes(video_bytes())  # a real video, outside the run
    it = session.iteration(1)
    name = {"outside": "../../../../secret.mp4", "absolute": str(secret), "symlink": "link.mp4"}
    if escape == "symlink":
        (it.videos_dir / "link.mp4").symlink_to(secret)
    summary = it.read_summary()
    assert summary is not None
    summary.checkpoints[-1].videos["median"] = name[escape]
    it.save_summary(summary)
    answer = call_tool(Lookback(session, 2, images=True), "view_frames", {"iteration": 1})
    assert not answer.ok and answer.images == () and "no median video" in answer.text
    assert it.video(name[escape]) is None and it.video(VIDEO) is not None
