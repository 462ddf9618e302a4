import json

import pytest

from langmarl.core.errors import ConfigError
from langmarl.magrpo.config import ActorCriticConfig, MAGRPOConfig
from langmarl.magrpo.run import RunConfig, load_run_config


def test_shipped_configs_load(tmp_path):
    for name in ("coding_tiny", "writing_tiny"):
        config = load_run_config(f"configs/magrpo/{name}.json")
        args = config.trainer_config()
        assert isinstance(args, MAGRPOConfig) and args.num_agents == 2
    iac = load_run_config("configs/magrpo/writing_iac_tiny.json", {"algorithm": "maac"})
    assert isinstance(iac.trainer_config(), ActorCriticConfig)


def test_overrides_apply_and_unknown_keys_suggest(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"algorithm": "iac", "trainer": {"num_turns": 2}}))
    config = load_run_config(path, {"trainer.max_steps": 3})
    assert isinstance(config.trainer_config(), ActorCriticConfig)
    with pytest.raises(ConfigError, match="Did you mean 'trainer'"):
        load_run_config(path, {"trainr.max_steps": 3})


def test_bad_trainer_field_names_the_fix(tmp_path):
    with pytest.raises(ConfigError, match="num_generations >= 2"):
        RunConfig(trainer={"num_generations": 1}).trainer_config()


def test_a_new_run_never_lands_on_an_old_one(tmp_path):
    from langmarl.magrpo.run import check_new_run, load_run_dir, save_run_config

    config = load_run_config(
        "configs/magrpo/poster.json", {"runs_dir": str(tmp_path), "run_id": "run"}
    )
    check_new_run(config)  # nothing there yet
    save_run_config(config)
    assert load_run_dir(tmp_path / "run") == config
    (tmp_path / "run" / "metrics.jsonl").write_text("{}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="--resume latest"):
        check_new_run(config)
    moved = tmp_path / "moved"
    (tmp_path / "run").rename(moved)
    assert load_run_dir(moved).trainer_config().output_dir == str(moved.resolve())
    with pytest.raises(ConfigError, match=r"run_config\.json"):
        load_run_dir(tmp_path)
