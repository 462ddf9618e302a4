from pathlib import Path

import numpy as np
import pytest

from langmarl.core.errors import ConfigError
from langmarl.p2p import RewardFunction, load_reward_file, load_reward_source
from langmarl.p2p.reward.function import LegacyReward, check_output, parse_docstring

INFO = {"x_velocity": 2.0}
ACTION = np.array([1.0, -1.0])


def test_class_form_loads_and_computes(reward_sources):
    reward = load_reward_source(reward_sources["class"])
    assert isinstance(reward, RewardFunction)
    total, terms = reward(np.zeros(3), ACTION, np.zeros(3), INFO)
    assert terms == {"backward": -2.0, "ctrl": pytest.approx(-0.2)}
    assert total == pytest.approx(-2.2)
    assert set(reward.terms) == {"backward", "ctrl"}
    assert "v_x" in reward.latex
    assert reward.description == ""


def test_stateful_reward_resets(reward_sources):
    reward = load_reward_source(reward_sources["class"])
    reward(np.zeros(3), ACTION, np.zeros(3), INFO)
    reward(np.zeros(3), ACTION, np.zeros(3), INFO)
    assert reward.steps == 2
    reward.reset()
    assert reward.steps == 0


def test_legacy_form_reads_docstring(reward_sources):
    reward = load_reward_source(reward_sources["legacy"])
    assert isinstance(reward, LegacyReward)
    assert reward.latex == "r = v_x"
    assert reward.terms == {"speed": "forward velocity"}
    assert reward.description == "Run forward."
    assert reward(None, ACTION, None, INFO) == (2.0, {"speed": 2.0})


def test_parse_docstring_without_sections():
    assert parse_docstring(None) == ("", {}, "")
    latex, terms, description = parse_docstring("Just words.\nTerms:\n  a: first\n  b: second")
    assert (latex, terms, description) == ("", {"a": "first", "b": "second"}, "Just words.")


def test_load_from_file(tmp_path: Path, reward_sources):
    path = tmp_path / "r.py"
    path.write_text(reward_sources["legacy"])
    assert load_reward_file(path).terms == {"speed": "forward velocity"}


def test_missing_file_and_missing_reward_are_clear(tmp_path: Path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_reward_file(tmp_path / "nope.py")
    with pytest.raises(ConfigError, match="defines no reward"):
        load_reward_source("x = 1")
    with pytest.raises(ConfigError, match="syntax error on line 1"):
        load_reward_source("def reward_fn(:")


@pytest.mark.parametrize(
    ("output", "message"),
    [
        (1.0, "must return"),
        ((float("nan"), {}), "not finite"),
        ((1.0, {"a": float("inf")}), "term 'a' is not finite"),
        ((np.ones(3), {}), "scalar"),
        (("x", {}), "number"),
        ((1.0, {"other": 1.0}), "undeclared terms"),
    ],
)
def test_check_output_rejects_bad_values(output, message):
    with pytest.raises(ValueError, match=message):
        check_output(output, {"a": "declared"})


def test_check_output_accepts_numpy_scalars():
    assert check_output((np.float32(1.5), {"a": np.float64(2)}), {"a": ""}) == (1.5, {"a": 2.0})
