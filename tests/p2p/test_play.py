"""A reward-space run saves its PPO policy as data, and `langmarl p2p play` reloads and plays
it without unpickling anything the confined run wrote (issue 26, finding 1)."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.core.errors import ConfigError, LangmarlError
from langmarl.p2p import IterationRecord, TrainConfig, train_runs
from langmarl.p2p.learner.play import find_policy_run, play
from langmarl.p2p.learner.ppo_policy import NORMALIZE_FILE, POLICY_FILE
from langmarl.p2p.learner.sb3_trainer import run_training

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
    assert (iteration.path / POLICY_FILE).exists()


@pytest.mark.slow
def test_a_confined_run_saves_the_policy_and_play_reloads_it(tmp_path: Path) -> None:
    reward = tmp_path / "reward.py"
    reward.write_text(PENDULUM_REWARD, encoding="utf-8")
    iteration = IterationRecord(tmp_path / "session" / "iter_1")
    result = train_runs(iteration, reward, [TrainConfig(**TINY)], [1], timeout_s=240)
    assert result.errors == {} and result.runs, result.errors
    policy = iteration.path / POLICY_FILE
    header = int.from_bytes(policy.read_bytes()[:8], "little")  # safetensors: a JSON header
    assert json.loads(policy.read_bytes()[8 : 8 + header])["mlp_extractor.policy_net.0.weight"]
    stats = json.loads((iteration.path / NORMALIZE_FILE).read_text())
    assert stats["norm_obs"] is True and len(stats["mean"]) == 4  # InvertedPendulum's obs
    assert policy.stat().st_size < 1_000_000  # far inside the sandbox's mirror budget
    pickles = [p.name for p in iteration.path.rglob("*") if p.suffix in (".pkl", ".zip", ".pt")]
    assert pickles == []

    played = play(iteration.path, episodes=2)
    assert played.run_dir == iteration.path and played.env_id == "InvertedPendulum-v5"
    assert len(played.returns) == 2 and all(1 <= n <= 40 for n in played.lengths)
    # +1 per step alive (0 on the step that ends it)
    assert all(r in (n, n - 1) for r, n in zip(played.returns, played.lengths, strict=True))
    # the reloaded policy (normalisation included) replays training's final evaluation
    # episode: same seed, same deterministic actions, same length
    final = iteration.read_summary().checkpoints[-1]
    assert played.lengths[0] == final.mean_length

    # played in a fresh process that records every global an unpickler resolves: none
    watch = (
        "import sys\n"
        "from langmarl.p2p.learner.play import play\n"
        "import stable_baselines3, safetensors.torch\n"  # imported before the watch starts
        "seen = []\n"
        "sys.addaudithook(lambda e, a: seen.append(a) if e == 'pickle.find_class' else None)\n"
        f"play({str(iteration.path)!r}, episodes=1)\n"
        "print('UNPICKLED', seen)\n"
    )
    watched = subprocess.run([sys.executable, "-c", watch], capture_output=True, text=True,
                             timeout=300)  # fmt: skip
    assert watched.returncode == 0, watched.stderr[-2000:]
    assert "UNPICKLED []" in watched.stdout, watched.stdout[-2000:]

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
        (iteration.runs_dir / run_id / POLICY_FILE).write_bytes(b"{}")
    iteration.aggregation_path.write_text(json.dumps({"best_run": "config_0_seed_2"}))
    assert find_policy_run(iteration.path).path == iteration.runs_dir / "config_0_seed_2"


def test_a_dir_without_a_model_names_the_dirs_that_have_one(tmp_path: Path) -> None:
    (tmp_path / "iter_2").mkdir()
    (tmp_path / "iter_2" / POLICY_FILE).write_bytes(b"{}")
    with pytest.raises(ConfigError, match=r"holds no policy\.safetensors.*iter_2"):
        find_policy_run(tmp_path)
    (tmp_path / "iter_1").mkdir()  # a session's iteration whose training never finished
    result = CliRunner().invoke(build_app(), ["p2p", "play", str(tmp_path / "iter_1")])
    assert isinstance(result.exception, ConfigError) and "holds no policy.safetensors" in str(
        result.exception
    )


class _Payload:
    """Unpickling this writes a marker file: what a poisoned pickle would do on the host."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (Path.write_text, (self.marker, "pwned"))


def test_an_older_runs_pickles_are_refused_not_loaded(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    old = tmp_path / "iter_1"
    old.mkdir()
    (old / "model.zip").write_bytes(pickle.dumps(_Payload(marker)))
    (old / "vecnormalize.pkl").write_bytes(pickle.dumps(_Payload(marker)))
    with pytest.raises(ConfigError, match="does not load outside the sandbox"):
        play(old)
    assert not marker.exists()


@pytest.mark.parametrize("poisoned", [POLICY_FILE, NORMALIZE_FILE])
def test_tampered_policy_files_are_refused_and_run_nothing(tmp_path: Path, poisoned: str) -> None:
    """What a confined run could leave: a pickle, or data of the wrong shape, in either file."""
    iteration = IterationRecord(tmp_path / "iter_1")
    run_training(iteration, PENDULUM_REWARD, TrainConfig(**TINY))
    iteration.save_config(TrainConfig(**TINY))
    play(iteration.path)  # as saved, it plays
    marker = tmp_path / "marker"
    (iteration.path / poisoned).write_bytes(pickle.dumps(_Payload(marker)))
    with pytest.raises(LangmarlError, match=poisoned.replace(".", r"\.")):  # names the file
        play(iteration.path)
    assert not marker.exists()
    if poisoned == NORMALIZE_FILE:
        wrong = {"norm_obs": True, "mean": [0.0] * 3, "var": [1.0] * 4, "epsilon": 1e-8,
                 "clip_obs": 10.0}  # fmt: skip
        (iteration.path / poisoned).write_text(json.dumps(wrong))
        with pytest.raises(ConfigError, match="mean must be 4 finite numbers"):
            play(iteration.path)
