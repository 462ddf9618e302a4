import pytest

from langmarl.core.errors import ConfigError
from langmarl.p2p.agents.reviser import apply_hp_changes, clamp_hp_changes, revise
from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.reward.env_specs import get_env_spec
from langmarl.p2p.session.contracts import JudgmentResult
from langmarl.testing import ScriptedLLM


def test_clamp_keeps_whitelisted_and_clamps():
    applied, rejected = clamp_hp_changes(
        {
            "learning_rate": 1.0,
            "ent_coef": -3,
            "n_epochs": 12.6,
            "gamma": 0.95,
            "net_arch": [8],
            "clip_range": "x",
            "vf_coef": float("nan"),
        }
    )
    assert applied == {"learning_rate": 3e-3, "ent_coef": 0.0, "n_epochs": 13.0, "gamma": 0.95}
    assert set(rejected) == {"net_arch", "clip_range", "vf_coef"}
    assert "not tunable" in rejected["net_arch"]


def test_apply_hp_changes_returns_valid_config():
    config = apply_hp_changes(TrainConfig(), {"n_epochs": 13.0, "learning_rate": 1e-3})
    assert config.n_epochs == 13 and isinstance(config.n_epochs, int)
    assert config.learning_rate == 1e-3


def test_revise_parses_code_and_hparams():
    reply = (
        "```python\ndef reward_fn(o, a, n, i):\n    return 1.0, {}\n```\n"
        '```json\n{"ent_coef": 0.5}\n```'
    )
    llm = ScriptedLLM([reply])
    result = revise(
        llm, intent="run", code="old", judgment=JudgmentResult(intent_score=0.2),
        term_means={"a": 1.0}, measurements="x", config=TrainConfig(),
        spec=get_env_spec("HalfCheetah-v5"),
    )  # fmt: skip
    assert result.reward_code is not None and result.reward_code.startswith("def reward_fn")
    assert result.hp_changes == {"ent_coef": 0.05}
    prompt = str(llm.backend.requests[0].messages[-1]["content"])
    assert "score 0.20" in prompt and "old" in prompt


def test_revise_without_code_says_so():
    result = revise(
        ScriptedLLM(["no idea"]), intent="run", code="old", judgment=JudgmentResult(),
        term_means={}, measurements="", config=TrainConfig(), spec=get_env_spec("Hopper-v5"),
        hp_tuning=False,
    )  # fmt: skip
    assert result.reward_code is None and "no revised code" in result.notes
    assert result.hp_changes == {}


def test_train_config_errors_and_presets():
    assert TrainConfig.for_env("Humanoid-v5").net_arch == [256, 256]
    with pytest.raises(ConfigError, match="Did you mean 'learning_rate'"):
        TrainConfig.from_dict({"learning_rat": 0.1})
    with pytest.raises(ConfigError, match="batch_size"):
        TrainConfig.from_dict({"num_steps": 16, "batch_size": 64})
