from pathlib import Path

from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.p2p.validation import check_static

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "p2p"
runner = CliRunner()


def test_p2p_run_rejects_unknown_settings():
    result = runner.invoke(build_app(), ["p2p", "run", "run", "--set", "max_iteration=2"])
    assert result.exit_code != 0
    assert "Did you mean 'max_iterations'" in str(result.exception)


def test_p2p_bench_needs_an_existing_file(tmp_path: Path):
    result = runner.invoke(build_app(), ["p2p", "bench", str(tmp_path / "none.csv")])
    assert result.exit_code != 0 and "does not exist" in str(result.exception)


def test_shipped_configs_are_valid():
    from langmarl.cli.p2p_commands import _loop_config
    from langmarl.p2p.bench import read_cases
    from langmarl.p2p.train_config import TrainConfig

    assert (
        _loop_config(None, None, None, None, CONFIGS / "smoke.yaml").env_id == "InvertedPendulum-v5"
    )
    config = _loop_config(
        "Hopper-v5", 3, 10, ["train.n_epochs=4"], CONFIGS / "halfcheetah_backwards.yaml"
    )
    assert (config.env_id, config.max_iterations, config.total_timesteps) == ("Hopper-v5", 3, 10)
    assert config.train == {"num_evals": 4, "eval_episodes": 5, "n_epochs": 4}
    assert TrainConfig.from_file(CONFIGS / "train_halfcheetah_tiny.json").total_timesteps == 4096
    assert len(read_cases(CONFIGS / "cases.csv")) == 5
    assert check_static((CONFIGS / "backwards_reward.py").read_text()).ok
