from pathlib import Path

from langmarl.core.files import append_jsonl
from langmarl.p2p import IterationRecord, SessionRecord
from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.session.contracts import JudgmentResult, RewardSpec, TrainSummary


def _summary() -> TrainSummary:
    return TrainSummary(
        env_id="HalfCheetah-v5", seed=1, total_timesteps=100, steps_done=100, training_time_s=1.0,
        steps_per_second=100.0, final_episodic_return=1.5, final_env_return=2.0,
    )  # fmt: skip


def test_iteration_record_round_trip(tmp_path: Path):
    it = IterationRecord(tmp_path / "iter_1")
    assert it.derive_status() == "unknown" and it.validate()
    it.save_config(TrainConfig(total_timesteps=200))
    assert it.derive_status() == "pending"
    it.save_reward_source("def reward_fn(): ...")
    it.save_reward_spec(RewardSpec(latex="r", terms={"a": "b"}, origin="author"))
    append_jsonl(it.scalars_path, {"type": "train", "step": 50})
    append_jsonl(it.scalars_path, {"type": "eval", "step": 100})
    assert it.derive_status() == "running"
    assert it.compute_progress() == 0.5
    it.save_summary(_summary())
    it.save_judgment(JudgmentResult(intent_score=0.5, diagnosis="ok"))
    it.save_revised_reward("new")
    it.set_status("completed")
    (it.videos_dir).mkdir()
    (it.videos_dir / "eval_100_median.mp4").write_bytes(b"x")
    (it.path / "trajectory_50.npz").write_bytes(b"")
    (it.path / "trajectory_100.npz").write_bytes(b"")

    again = IterationRecord(tmp_path / "iter_1")
    assert again.read_config()["total_timesteps"] == 200
    assert again.read_reward_source() == "def reward_fn(): ..."
    assert again.read_reward_spec().origin == "author"
    assert again.read_summary() == _summary()
    assert again.read_judgment().intent_score == 0.5
    assert again.revised_reward_path.read_text() == "new"
    assert again.derive_status() == "completed"
    assert again.video_filenames() == ["eval_100_median.mp4"]
    assert again.trajectory_path.name == "trajectory_100.npz"
    training, evaluation = again.parse_scalars()
    assert [r["step"] for r in training] == [50] and [r["step"] for r in evaluation] == [100]
    assert again.validate() == []


def test_validate_lists_missing_items(tmp_path: Path):
    it = IterationRecord(tmp_path / "iter_2")
    it.save_config(TrainConfig())
    problems = it.validate()
    assert "missing summary.json" in problems and "missing metrics/scalars.jsonl" in problems


def test_session_record(tmp_path: Path):
    session = SessionRecord(tmp_path / "session_x")
    session.path.mkdir()
    session.set_status("running")  # not started: nothing recorded
    assert session.read_status() is None
    session.start("run", "CartPole-v1", {})
    session.touch_heartbeat()
    status = session.read_status()
    assert status["status"] == "running" and "heartbeat_at" in status
    assert not (session.path / "status.json").exists()  # run.json holds the status
    session.save_metadata({"prompt": "run"})
    assert session.update_metadata(starred=True) == {"prompt": "run", "starred": True}
    session.save_history({"status": "passed"})
    assert session.read_history() == {"status": "passed"}
    session.save_analysis({"a": 1})
    assert session.read_analysis() == {"a": 1}
    for n in (10, 2, 1):
        session.new_iteration(n)
    assert [r.iteration_id for r in session.iteration_records()] == ["iter_1", "iter_2", "iter_10"]
    assert session.get_iteration("iter_2") is not None and session.get_iteration("iter_3") is None


def test_the_judged_run_is_the_aggregations_best_run_else_the_iteration(tmp_path: Path):
    from langmarl.p2p.session.contracts import IterationAggregation

    it = IterationRecord(tmp_path / "iter_1")
    it.path.mkdir()
    assert it.read_aggregation() is None and it.judged_run() is it  # a single run
    it.aggregation_path.write_text(IterationAggregation(best_run="seed_2").model_dump_json())
    assert it.judged_run() is it  # named, but its directory is missing
    (it.runs_dir / "seed_2").mkdir(parents=True)
    judged = it.judged_run()
    assert judged.path == it.runs_dir / "seed_2" and judged.redact is it.redact
    held = IterationAggregation(best_run="seed_1")
    (it.runs_dir / "seed_1").mkdir()
    assert it.judged_run(held).path == it.runs_dir / "seed_1"  # the caller's, not the file's
    it.aggregation_path.write_text("{torn")
    assert it.read_aggregation() is None and it.judged_run() is it
