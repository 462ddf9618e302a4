"""The real trackers write what their own readers load back (TensorBoard, MLflow, W&B)."""

from __future__ import annotations

import os
from pathlib import Path

from langmarl.tracking import make_trackers
from langmarl.tracking.backends import MLflowTracker, mlflow_key

CONFIG = {"lr": 0.1, "llm": {"name": "local"}}


def _write(report_to: str, run_dir: Path) -> list[object]:
    group = make_trackers(report_to, run_dir, "run-1", CONFIG)
    group.log_record({"step": 0, "loss": 2.0, "reward": {"mean": 0.25}, "phase": "train"})
    group.log_record({"step": 5, "loss": 1.5, "reward": {"mean": 0.75}})
    trackers = list(group)
    group.close()
    group.close()  # closing twice is allowed
    return trackers


def test_tensorboard_event_files_load_in_tensorboard(tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    _write("tensorboard", tmp_path)
    events = EventAccumulator(str(tmp_path / "tensorboard"))
    events.Reload()
    assert sorted(events.Tags()["scalars"]) == ["loss", "reward/mean"]
    assert [(e.step, e.value) for e in events.Scalars("loss")] == [(0, 2.0), (5, 1.5)]
    assert [(e.step, e.value) for e in events.Scalars("reward/mean")] == [(0, 0.25), (5, 0.75)]


def test_mlflow_file_store_holds_the_metric_history_and_params(tmp_path: Path) -> None:
    from mlflow.tracking import MlflowClient

    before = os.environ.get("MLFLOW_ALLOW_FILE_STORE")
    (tracker,) = _write("mlflow", tmp_path)
    assert os.environ.get("MLFLOW_ALLOW_FILE_STORE") == before  # restored
    assert isinstance(tracker, MLflowTracker)
    assert tracker.tracking_uri == (tmp_path / "mlruns").resolve().as_uri()
    client = MlflowClient(tracking_uri=tracker.tracking_uri)
    history = client.get_metric_history(tracker.run_id, "reward/mean")
    assert [(m.step, m.value) for m in history] == [(0, 0.25), (5, 0.75)]
    run = client.get_run(tracker.run_id)
    assert run.info.run_name == "run-1" and run.info.status == "FINISHED"
    assert run.data.params == {"lr": "0.1", "llm/name": "local"}
    assert client.get_experiment(run.info.experiment_id).name == "langmarl"


def test_mlflow_keys_lose_only_refused_characters() -> None:
    assert mlflow_key("reward/mean (agent#1)") == "reward/mean _agent_1_"
