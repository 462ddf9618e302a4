"""A reward-space run saves its PPO policy, and `langmarl p2p play` reloads and plays it."""

from __future__ import annotations

import json
import tempfile
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.core.errors import ConfigError
from langmarl.p2p import IterationRecord, TrainConfig, train_runs
from langmarl.p2p.play import find_policy_run, play
from langmarl.p2p.sb3_trainer import MODEL_FILE, NORMALIZE_FILE, run_training

from .conftest import PENDULUM_REWARD

TINY = {
    "env_id": "InvertedPendulum-v5", "total_timesteps": 256, "num_steps": 128, "batch_size": 64,
    "n_epochs": 1, "num_evals": 1, "eval_episodes": 1, "max_episode_steps": 40,
    "record_video": False, "video_width": 96, "video_height": 96,
}  # fmt: skip


def test_training_leaves_no_logger_folder_in_the_temp_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    iteration = IterationRecord(tmp_path / "session" / "iter_1")
    summary = run_training(iteration, PENDULUM_REWARD, TrainConfig(**TINY))
    assert summary.steps_done >= TINY["total_timesteps"]
    assert [p.name for p in temp.iterdir() if p.name.startswith("SB3-")] == []
    assert (iteration.path / MODEL_FILE).exists()


@pytest.mark.slow
def test_a_confined_run_saves_the_policy_and_play_reloads_it(tmp_path: Path) -> None:
    reward = tmp_path / "reward.py"
    reward.write_text(PENDULUM_REWARD, encoding="utf-8")
    iteration = IterationRecord(tmp_path / "session" / "iter_1")
    result = train_runs(iteration, reward, [TrainConfig(**TINY)], [1], timeout_s=240)
    assert result.errors == {} and result.runs, result.errors
    model = iteration.path / MODEL_FILE
    assert zipfile.is_zipfile(model) and "policy.pth" in zipfile.ZipFile(model).namelist()
    assert (iteration.path / NORMALIZE_FILE).stat().st_size > 0
    assert model.stat().st_size < 1_000_000  # far inside the sandbox's mirror budget

    played = play(iteration.path, episodes=2)
    assert played.run_dir == iteration.path and played.env_id == "InvertedPendulum-v5"
    assert len(played.returns) == 2 and all(1 <= n <= 40 for n in played.lengths)
    # +1 per step alive (0 on the step that ends it)
    assert all(r in (n, n - 1) for r, n in zip(played.returns, played.lengths, strict=True))
    # the reloaded policy (normalisation included) replays training's final evaluation
    # episode: same seed, same deterministic actions, same length
    final = iteration.read_summary().checkpoints[-1]
    assert played.lengths[0] == final.mean_length

    video = tmp_path / "out.mp4"
    shown = CliRunner().invoke(
        build_app(), ["p2p", "play", str(iteration.path), "--episodes", "1", "--video", str(video)]
    )
    assert shown.exit_code == 0, shown.output
    assert "episode 0: env return" in shown.output and "video:" in shown.output
    assert video.stat().st_size > 1000 and video.read_bytes()[4:8] == b"ftyp"


def test_a_multi_run_iteration_plays_its_judged_run(tmp_path: Path) -> None:
    iteration = IterationRecord(tmp_path / "iter_1")
    for run_id in ("config_0_seed_1", "config_0_seed_2"):
        (iteration.runs_dir / run_id).mkdir(parents=True)
        (iteration.runs_dir / run_id / MODEL_FILE).write_bytes(b"PK")
    iteration.aggregation_path.write_text(json.dumps({"best_run": "config_0_seed_2"}))
    assert find_policy_run(iteration.path).path == iteration.runs_dir / "config_0_seed_2"


def test_a_dir_without_a_model_names_the_dirs_that_have_one(tmp_path: Path) -> None:
    (tmp_path / "iter_2").mkdir()
    (tmp_path / "iter_2" / MODEL_FILE).write_bytes(b"PK")
    with pytest.raises(ConfigError, match=r"holds no model\.zip.*iter_2"):
        find_policy_run(tmp_path)
    result = CliRunner().invoke(build_app(), ["p2p", "play", str(tmp_path / "missing")])
    assert isinstance(result.exception, ConfigError) and "holds no model.zip" in str(
        result.exception
    )
