"""A custom external transition named in a run file as ``package.module:function``
(issue 42, item 7): it is loaded with the entry-point loader, checked when the run file
loads (one line naming what is wrong), and called between turns in training."""

from __future__ import annotations

import importlib
import json
import math
from pathlib import Path
from types import ModuleType

import pytest
from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.core.errors import ConfigError
from langmarl.core.validation import validate_model
from langmarl.magrpo.actor_critic import IACTrainer
from langmarl.magrpo.config import ActorCriticConfig
from langmarl.magrpo.feedback import make_external
from langmarl.magrpo.run import RunConfig

ROOT = Path(__file__).parents[2]
NAME = "tests.magrpo.named_transition:shout_back"


@pytest.fixture
def named(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The transition's module, importable by its dotted name, its calls cleared."""
    monkeypatch.syspath_prepend(str(ROOT))
    module = importlib.import_module("tests.magrpo.named_transition")
    module.CALLS.clear()
    return module


def test_a_named_transition_loads_from_a_run_file(named: ModuleType) -> None:
    config = validate_model(RunConfig, {"external": {"mode": NAME}}, "run.json")
    assert make_external(config.external.mode) is named.shout_back
    prompts = make_external(NAME)("Write a haiku.", ["one", "two"], 2)
    assert [p.split(":")[0] for p in prompts] == [named.MARK, named.MARK]
    assert named.CALLS == [2]


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("tests.magrpo.named_transition:nope", "has no attribute 'nope'"),
        ("tests.magrpo.named_transition:NOT_A_FUNCTION", "is a int, not a function"),
        ("no_such_package.feedback:f", "No module named 'no_such_package'"),
        (":f", "is not 'package.module:function'"),
        ("plian", "Did you mean 'plain'?"),
    ],
)
def test_a_bad_name_fails_the_run_file_in_one_line(named: ModuleType, mode: str, said: str):
    with pytest.raises(ConfigError) as caught:
        validate_model(RunConfig, {"external": {"mode": mode}}, "run.json")
    problem = [line for line in str(caught.value).splitlines() if "external.mode" in line]
    assert len(problem) == 1 and said in problem[0], str(caught.value)


def test_training_calls_the_named_transition_between_turns(
    named: ModuleType, tiny_models, tmp_path: Path
) -> None:
    models, tokenizers = tiny_models
    config = ActorCriticConfig(
        output_dir=str(tmp_path / "run"), num_turns=2, max_new_tokens=4, max_steps=1,
        use_chat_template=False, sampling_precision="fp32", parallel_agents=False,
    )  # fmt: skip
    trainer = IACTrainer(
        models, lambda samples: [1.0 + s.turn for s in samples], config,
        tokenizers=tokenizers, train_dataset=[{"prompt": "Say hi."}],
        external_transition=make_external(NAME),
    )  # fmt: skip
    history = trainer.train()
    assert [row["step"] for row in history] == [1]
    assert named.CALLS == [2]  # once, after turn 1 of the one episode, for both agents


@pytest.mark.slow
def test_the_train_command_runs_a_named_transition(named: ModuleType, tmp_path: Path) -> None:
    """Also the real-model run of the shipped ``iac_online.json`` (IAC, an update per turn):
    one example, G=1, two turns (a root and its child), two updates, a finite value loss from
    each agent's critic head. IAC with an update per episode (``writing_iac_tiny.json``) is
    not trained for real: its critics are these, and its episode update is ``maac.json``'s
    (test_shipped_actor_critic_configs.py); both are trained on tiny models."""
    settings = {"external.mode": NAME, "runs_dir": str(tmp_path), "run_id": "run",
                "trainer.max_steps": "1", "trainer.max_new_tokens": "4",
                "task.num_train": "1", "task.num_eval": "1", "heldout": "false"}  # fmt: skip
    overrides = [arg for key, value in settings.items() for arg in ("--set", f"{key}={value}")]
    config = str(ROOT / "configs" / "magrpo" / "iac_online.json")
    result = CliRunner().invoke(build_app(), ["magrpo", "train", config, "--no-plot", *overrides])
    assert result.exit_code == 0, result.output
    assert named.CALLS and set(named.CALLS) == {2}
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert (run["kind"], run["status"]) == ("iac", "completed")
    [metrics] = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").open()]
    assert metrics["step"] == 1 and metrics["nodes"] == 2 and metrics["updates"] == 2
    assert all(math.isfinite(metrics[f"critic-{i}/value_loss"]) for i in (0, 1))
    assert not (tmp_path / "run" / "heldout.json").exists()
