"""The executor on real MuJoCo at tiny budgets (slow)."""

import subprocess
import sys
from pathlib import Path

import pytest

from langmarl.p2p import IterationRecord, TrainConfig, train_runs

from .conftest import CLASS_REWARD, PENDULUM_REWARD

TINY = {
    "total_timesteps": 256, "num_steps": 128, "batch_size": 64, "n_epochs": 1, "num_evals": 1,
    "eval_episodes": 2, "max_episode_steps": 25, "video_width": 160, "video_height": 128,
}  # fmt: skip
"""Two rollouts (the first row before any PPO update, the last after one); one evaluation, at
the end (rendering, not training, is most of a run's CPU here; evaluations spaced over a run
are tests/plots/test_plot_real_runs.py's), of two episodes: the p10 and p90 videos are of
different ones."""


def _assert_contract(record: IterationRecord) -> None:
    """A finished HalfCheetah run of CLASS_REWARD at TINY: every file of the contract."""
    assert record.validate() == []
    assert record.derive_status() == "completed"
    training, evaluation = record.parse_scalars()
    assert set(training[0]["term_means"]) == {"backward", "ctrl"}
    assert training[0]["env_reward_mean"] is not None
    assert [row["step"] for row in evaluation] == [256]
    assert "train/value_loss" not in training[0]  # no PPO update before the first rollout
    assert training[-1]["train/value_loss"] > 0 and "train/approx_kl" in training[-1]
    summary = record.read_summary()
    assert summary.steps_done == 256 and set(summary.term_means) == {"backward", "ctrl"}
    videos = summary.checkpoints[-1].videos
    assert set(videos) == {"p10", "median", "p90"} and videos["p10"] != videos["p90"]
    video = record.videos_dir / videos["median"]
    assert video.stat().st_size > 1000 and video.read_bytes()[4:8] == b"ftyp"
    assert record.trajectory_path.name == "trajectory_256.npz"
    assert record.read_reward_spec().terms == {
        "backward": "negative x velocity",
        "ctrl": "control cost",
    }


@pytest.mark.slow
def test_train_runs_fans_out_seeds_in_parallel_confined_executors_that_write_the_contract(
    tmp_path: Path,
):
    """Two seeds at once, each a confined run of the executor's command line (``python -m
    langmarl.p2p.learner.executor``, its output in ``executor.log``) that trains HalfCheetah
    and writes the whole contract, videos (ffmpeg in the confinement) included."""
    reward = tmp_path / "reward_fn.py"
    reward.write_text(CLASS_REWARD)
    iteration = IterationRecord(tmp_path / "iter_1")
    config = TrainConfig.for_env("HalfCheetah-v5", **TINY)
    aggregation = train_runs(iteration, reward, [config], [1, 2], max_parallel=2, timeout_s=200)
    assert aggregation.errors == {}
    assert sorted(aggregation.runs) == ["config_0_seed_1", "config_0_seed_2"]
    assert {s.seed for s in aggregation.runs.values()} == {1, 2}
    assert aggregation.best_run in aggregation.runs
    assert iteration.read_summary() == aggregation.runs[aggregation.best_run]
    runs = iteration.run_records()
    assert [r.iteration_id for r in runs] == sorted(aggregation.runs)
    for record in runs:
        log = (record.path / "executor.log").read_text()  # its stdout and stderr
        assert str(record.path) in log.splitlines()  # the CLI prints its run dir
        _assert_contract(record)


@pytest.mark.slow
def test_train_runs_kills_a_run_over_its_timeout(tmp_path: Path):
    reward = tmp_path / "reward_fn.py"
    reward.write_text(PENDULUM_REWARD)
    iteration = IterationRecord(tmp_path / "iter_1")
    config = TrainConfig.for_env("InvertedPendulum-v5", total_timesteps=10**7)
    aggregation = train_runs(iteration, reward, [config], [1], timeout_s=1.0)
    assert aggregation.runs == {}
    assert "timeout" in aggregation.errors["seed_1"]


RAISING_REWARD = '''
def reward_fn(obs, action, next_obs, info):
    """Fail at once.
    LaTeX: r = 0
    Terms:
        zero: nothing
    """
    raise RuntimeError("reward broke at its first step")
'''


@pytest.mark.slow
def test_a_reward_that_raises_fails_its_run_with_the_executors_log_tail(tmp_path: Path):
    """The confined process's error crosses the wall as text: the run is left out of the
    aggregation and its error names what the reward raised."""
    reward = tmp_path / "reward_fn.py"
    reward.write_text(RAISING_REWARD)
    iteration = IterationRecord(tmp_path / "iter_1")
    config = TrainConfig.for_env("InvertedPendulum-v5", **{**TINY, "record_video": False})
    aggregation = train_runs(iteration, reward, [config], [1], timeout_s=200)
    assert aggregation.runs == {}
    assert "reward broke at its first step" in aggregation.errors["seed_1"], aggregation.errors


def test_training_environ_keeps_only_the_allow_list():
    from langmarl.p2p.learner.executor import training_environ

    environ = {"PATH": "/bin", "OPENAI_API_KEY": "sk-x", "HF_TOKEN": "t", "db_password": "p"}
    environ |= {"DATABASE_URL": "postgres://u:pw@db/x", "OMP_NUM_THREADS": "1"}
    assert training_environ(environ) == {"OMP_NUM_THREADS": "1"}


def test_executor_main_reports_a_missing_reward_file(tmp_path: Path, capsys):
    from langmarl.p2p.learner.executor import main

    assert main(["--reward-fn", str(tmp_path / "none.py"), "--runs-dir", str(tmp_path)]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_plan_runs_single_and_multi(tmp_path: Path):
    from langmarl.p2p.learner.executor import plan_runs

    iteration = IterationRecord(tmp_path / "iter_1")
    (single,) = plan_runs(iteration, [TrainConfig()], [7])
    assert single.record.path == iteration.path and single.config.seed == 7
    multi = plan_runs(iteration, [TrainConfig(), TrainConfig(gamma=0.9)], [1, 2])
    assert [s.run_id for s in multi] == [
        "config_0_seed_1", "config_0_seed_2", "config_1_seed_1", "config_1_seed_2",
    ]  # fmt: skip
    assert multi[3].config.gamma == 0.9 and multi[3].record.path.parent == iteration.runs_dir


def test_confined_command_writes_only_the_run_and_temp_dirs(tmp_path: Path):
    from langmarl.p2p.learner.executor import confined_command

    run_dir, tmp_dir, outside = tmp_path / "run", tmp_path / "tmp", tmp_path / "outside"
    for path in (run_dir, tmp_dir, outside):
        path.mkdir()
    reward = tmp_path / "reward_fn.py"
    reward.write_text("print('reward')")
    program = (
        "import sys\n"
        "print(open(sys.argv[1]).read())\n"
        "for d in sys.argv[2:]:\n"
        "    try:\n        open(d + '/f', 'w').write('x'); print('wrote')\n"
        "    except OSError:\n        print('refused')\n"
    )
    command = [sys.executable, "-c", program, str(reward), str(run_dir), str(tmp_dir), str(outside)]
    done = subprocess.run(
        confined_command(command, reward, run_dir, tmp_dir),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["print('reward')", "wrote", "wrote", "refused"]
    assert not (outside / "f").exists()
