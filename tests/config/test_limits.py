"""Absurd sizes are refused before a run starts, naming the field and the limit."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.config.loading import load_config
from langmarl.core.errors import ConfigError


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"trajectories_per_iteration": 1e12}, "trajectories_per_iteration"),
        ({"llm": {"preset": "local", "max_tokens": 1e15}}, "max_tokens"),
        ({"max_failure_rate": 1.5}, "max_failure_rate"),
        ({"llm": {"preset": "local", "temperature": float("nan")}}, "temperature"),
        ({"max_workers": 10**9}, "max_workers"),
    ],
)
def test_out_of_range_values_name_the_field(
    tmp_path: Path, override: dict[str, object], field: str
) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"env": "language", **override}))
    with pytest.raises(ConfigError, match=field):
        load_config(path)


@pytest.mark.parametrize("option", [["--episodes", "-3"], ["--iteration", "-1"]])
def test_eval_refuses_negative_counts_and_saves_nothing(tmp_path: Path, option: list[str]) -> None:
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    result = CliRunner().invoke(build_app(), ["eval", str(run), *option])
    assert result.exit_code == 2 and "Invalid value" in result.output
    assert list(run.iterdir()) == []
