"""MAGRPO feeds its metrics stream to `report_to` trackers: TensorBoard event files and an
MLflow file store, both read back."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mlflow.tracking import MlflowClient

from langmarl.magrpo.config import MAGRPOConfig
from langmarl.magrpo.trainer import MAGRPOTrainer
from langmarl.store.run import RunDir


def test_magrpo_reports_to_tensorboard_and_mlflow(
    tiny_models, tmp_path: Path, tensorboard_scalars: Callable[[Path, str], list[tuple[int, float]]]
) -> None:
    models, tokenizers = tiny_models
    run = tmp_path / "tiny"
    config = MAGRPOConfig(
        output_dir=str(run), num_generations=2, max_new_tokens=4, max_steps=2,
        use_chat_template=False, report_to=["tensorboard", "mlflow"],
    )  # fmt: skip
    MAGRPOTrainer(
        models, lambda samples: [0.5] * len(samples), config,
        tokenizers=tokenizers, train_dataset=[{"prompt": "Say hi."}, {"prompt": "A color?"}],
    ).train()  # fmt: skip
    assert [step for step, _ in tensorboard_scalars(run, "reward_mean")] == [1, 2]
    uri = (run / "mlruns").resolve().as_uri()
    client = MlflowClient(tracking_uri=uri)
    [experiment] = [e for e in client.search_experiments() if e.name == "langmarl"]
    [logged] = client.search_runs([experiment.experiment_id])
    history = client.get_metric_history(logged.info.run_id, "reward_mean")
    assert [m.step for m in history] == [1, 2]
    assert [m["step"] for m in RunDir(run).metrics()] == [1, 2]


def test_the_step_line_shows_each_turns_reward_when_there_are_several() -> None:
    """A task that rewards only its second turn (the reference game) printed reward 0.000
    at every step: the line now shows each turn's mean."""
    from langmarl.cli.magrpo_commands import step_line

    one = {"reward_turn0": 0.4125, "reward_mean": 0.4125, "return_mean": 0.4125}
    assert step_line(3, one) == "step 3: reward 0.412 return 0.412"
    two = {"reward_turn0": 0.0, "reward_turn1": 0.5667, "reward_mean": 0.0, "return_mean": 0.5667}
    assert step_line(4, two) == "step 4: reward 0.000 / 0.567 return 0.567"
