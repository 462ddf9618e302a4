"""`langmarl config show` resolves a config of every kind the way its command loads it, and
CONFIG is positional in every command that takes one (`--config` kept as an alias)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from langmarl.cli import build_app

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def show(*args: str) -> dict:
    result = CliRunner().invoke(build_app(), ["config", "show", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.parametrize(
    ("file", "kind", "check"),
    [
        ("quickstart.json", "env", lambda d: d["env"] == "language"),
        ("parl/language_tiny.json", "env", lambda d: d["env"] == "parallel_tasks"),
        ("magrpo/quickstart.json", "magrpo", lambda d: d["trainer"]["max_steps"] == 16),
        ("parl/grpo_tiny.json", "parl_grpo", lambda d: d["grpo"]["num_generations"] == 2),
        ("p2p/smoke.yaml", "p2p", lambda d: d["train"]["env_id"] == "InvertedPendulum-v5"),
    ],
)
def test_config_show_reads_every_kind(file: str, kind: str, check) -> None:
    data = show(str(CONFIGS / file))
    assert data["kind"] == kind
    assert check(data), data


def test_config_show_fills_defaults_and_applies_overrides_per_kind() -> None:
    magrpo = show(str(CONFIGS / "magrpo/quickstart.json"), "--set", "trainer.max_steps=3")
    assert magrpo["trainer"]["max_steps"] == 3
    assert magrpo["trainer"]["max_prompt_tokens"] == 512  # a default the file does not set
    p2p = show(str(CONFIGS / "p2p/smoke.yaml"), "--set", "train.n_epochs=5")
    assert p2p["train"]["n_epochs"] == 5 and p2p["pass_threshold"] == 0.7  # a default
    grpo = show(str(CONFIGS / "parl/grpo_tiny.json"), "--set", "grpo.num_steps=9")
    assert grpo["grpo"]["num_steps"] == 9 and grpo["env"]["task_set"] == "arithmetic"


def test_config_show_names_the_bad_field_of_a_weight_space_config(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"algorithm": "magrpo", "trainer": {"max_step": 3}}))
    result = CliRunner().invoke(build_app(), ["config", "show", str(path)])
    assert result.exit_code != 0
    assert "max_steps" in str(result.exception)


def test_an_unknown_kind_is_refused_with_the_closest() -> None:
    result = CliRunner().invoke(
        build_app(), ["config", "show", str(CONFIGS / "quickstart.json"), "--kind", "magrpoo"]
    )
    assert result.exit_code != 0 and "'magrpo'" in str(result.exception)


@pytest.mark.parametrize("group", [["parl", "grpo"], ["p2p", "run", "intent"]])
def test_config_is_positional_and_dash_dash_config_is_refused_when_they_differ(
    group: list[str], tmp_path: Path
) -> None:
    result = CliRunner().invoke(
        build_app(), [*group, str(tmp_path / "a.json"), "--config", str(tmp_path / "b.json")]
    )
    assert result.exit_code != 0
    assert "two config files given" in str(result.exception)
