"""The weight-space loop tells a step-aware reward the step before each step, resumes too."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langmarl.magrpo.config import MAGRPOConfig
from langmarl.magrpo.rollout import StepAwareReward
from langmarl.magrpo.trainer import MAGRPOTrainer

DATA = [{"prompt": "Say hi."}, {"prompt": "Name a color."}]


def _train(tiny_models: Any, run_dir: Path, reward: Any, steps: int, resume: bool) -> None:
    models, tokenizers = tiny_models
    config = MAGRPOConfig(output_dir=str(run_dir), num_generations=2, max_new_tokens=4,
                          max_steps=steps, num_train_epochs=2, use_chat_template=False,
                          save_steps=1)  # fmt: skip
    trainer = MAGRPOTrainer(models, reward, config, tokenizers=tokenizers, train_dataset=DATA)
    trainer.train(resume_from="latest" if resume else None)


class RecordingReward:
    """A step-aware reward: records the step it was told each time it scores."""

    def __init__(self) -> None:
        self.step = -1
        self.told: list[int] = []
        self.scored_at: list[int] = []

    def set_step(self, step: int) -> None:
        self.step = step
        self.told.append(step)

    def __call__(self, samples: Sequence[Any]) -> list[float]:
        self.scored_at.append(self.step)
        return [0.5] * len(samples)


def test_each_step_is_scored_at_its_own_step_and_a_resume_continues(
    tiny_models: Any, tmp_path: Path
) -> None:
    reward = RecordingReward()
    assert isinstance(reward, StepAwareReward) and not isinstance(len, StepAwareReward)
    _train(tiny_models, tmp_path, reward, steps=2, resume=False)
    assert reward.told == [0, 1] and reward.scored_at == [0, 1]

    resumed = RecordingReward()
    _train(tiny_models, tmp_path, resumed, steps=3, resume=True)
    assert resumed.told == [2] and resumed.scored_at == [2]
