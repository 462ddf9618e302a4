"""The phases' explicit hooks and limits: each worker limit bounds its own kind of call."""

import types
from pathlib import Path

import pytest
from trainer_fakes import count_peaks, make_parts

from langmarl.config.base import BaseConfig
from langmarl.core.errors import ConfigError
from langmarl.trainer import MonteCarloTrainer
from langmarl.trainer.phase_host import WorkerLimits


def test_limits_come_from_the_config_fields() -> None:
    config = BaseConfig(episode_generation_workers=3, max_workers=2, optimizer_workers=5)
    assert WorkerLimits.from_config(config) == WorkerLimits(episodes=3, evaluations=2, optimizer=5)
    defaults = WorkerLimits.from_config(BaseConfig())
    assert defaults == WorkerLimits(episodes=8, evaluations=5, optimizer=1)


def _peak_per_role(tmp_path: Path, **limits: int) -> dict[str, int]:
    cfg, env, critic, opt = make_parts(
        tmp_path, latency=0.02, num_iterations=1, trajectories_per_iteration=6,
        validate_updates=False, **limits,
    )  # fmt: skip
    peak = count_peaks(env.llm.backend)
    MonteCarloTrainer(cfg, env, critic, opt, callbacks=[]).train()
    return peak


def test_each_limit_bounds_its_phase(tmp_path: Path) -> None:
    peak = _peak_per_role(
        tmp_path, episode_generation_workers=6, max_workers=2, optimizer_workers=3
    )
    assert peak["actor"] == 6  # generate: episode_generation_workers
    assert peak["critic"] == 2  # evaluate: max_workers (evaluations), not the episode limit
    assert peak["gradient"] == 3  # gradients: optimizer_workers


def test_the_evaluation_limit_does_not_bound_episodes(tmp_path: Path) -> None:
    peak = _peak_per_role(
        tmp_path, episode_generation_workers=2, max_workers=6, optimizer_workers=1
    )
    assert peak["actor"] == 2 and peak["critic"] == 6 and peak["gradient"] == 1


def test_the_trainer_refuses_an_untyped_config(tmp_path: Path) -> None:
    _, env, critic, opt = make_parts(tmp_path)
    loose = types.SimpleNamespace(exp_name="x", experiment_dir=str(tmp_path))
    with pytest.raises(ConfigError, match=r"needs a run config .* got SimpleNamespace"):
        MonteCarloTrainer(loose, env, critic, opt)  # type: ignore[arg-type]
