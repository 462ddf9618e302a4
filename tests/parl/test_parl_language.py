"""Language-space PARL with a scripted LLM: λ anneals per iteration, curves are recorded, the
run is listed as kind parl_language."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langmarl.core.errors import ConfigError
from langmarl.envs.parallel.env import ParallelTasksEnv, make_parallel_tasks
from langmarl.llm.types import ChatRequest
from langmarl.parl.callbacks import PARLCallback
from langmarl.parl.config import ParallelTasksConfig
from langmarl.parl.curves import CURVES_FILE
from langmarl.store.catalog import find_runs
from langmarl.testing import ScriptedLLM, scripted_config
from langmarl.textgrad import CentralizedCritic, PolicyGradientOptimizer
from langmarl.trainer import MonteCarloTrainer


def _reply(request: ChatRequest) -> str:
    return _reply_to(str(request.messages[-1]["content"]))


def _reply_to(user: str) -> str:
    if "Write the plan now" in user:
        return "SUBTASK: What is 1 + 1?\nSUBTASK: What is 2 + 2?"
    if user.startswith("Question:"):
        return "ANSWER: 2" if "1 + 1" in user else "ANSWER: 4"
    if "helpers answered" in user:
        return "2\n4"
    return "Split every numbered part into its own SUBTASK line."


def test_monte_carlo_run_anneals_lambda_and_records_curves(tmp_path: Path) -> None:
    config = ParallelTasksConfig(
        exp_name="parl", runs_dir=str(tmp_path), num_iterations=2,
        trajectories_per_iteration=2, seed=1,
    )  # fmt: skip
    llm = ScriptedLLM(_reply, config=scripted_config(max_retries=0))
    env = make_parallel_tasks(config, llm=llm)
    assert isinstance(env, ParallelTasksEnv) and env.reward_kwargs["total_training_steps"] == 2
    trainer = MonteCarloTrainer(
        config, env, CentralizedCritic(config, llm=llm),
        PolicyGradientOptimizer(scripted_config(), llm=llm),
        callbacks=env.training_callbacks(),
    )  # fmt: skip
    assert isinstance(trainer.callbacks[0], PARLCallback)
    metrics = trainer.train()
    assert len(metrics) == 2
    document = trainer.store.read_json("parl", CURVES_FILE)
    curve = document["curve"]
    assert [p["step"] for p in curve] == [0, 1]
    assert [p["lambda1"] for p in curve] == pytest.approx([0.1, 0.05])
    assert all(p["episodes"] == 2 and p["critical_steps"] < p["serial_steps"] for p in curve)
    assert len(document["episodes"]) == 4
    assert curve[1]["total_reward"] < curve[0]["total_reward"]  # same episodes, smaller λ


def test_config_validates_and_loads_by_env_name(tmp_path: Path) -> None:
    from langmarl.config import load_config

    path = tmp_path / "c.json"
    path.write_text('{"env": "parallel_tasks", "task_set": "documents", "max_subagents": 3}')
    config = load_config(path)
    assert isinstance(config, ParallelTasksConfig) and config.max_subagents == 3
    with pytest.raises(ConfigError):
        ParallelTasksConfig.from_dict({"task_set": "poems"})


def _stub_reply(body: dict) -> str:
    return _reply_to(str(body["messages"][-1]["content"]))


def _parl_config_file(tmp_path: Path, url_config: dict) -> Path:
    path = tmp_path / "parl.json"
    path.write_text(json.dumps({
        "env": "parallel_tasks", "exp_name": "parl", "num_iterations": 2,
        "trajectories_per_iteration": 2, "seed": 1, "validate_updates": False,
        "llm": url_config, "runs_dir": str(tmp_path / "runs"),
        "checkpoint_dir": str(tmp_path / "ck"),
    }))  # fmt: skip
    return path


@pytest.mark.parametrize("command", [["train"], ["parl", "train"]])
def test_both_train_commands_anneal_lambda_through_the_env_hooks(
    tmp_path: Path, command: list[str]
) -> None:
    # `langmarl train` assembles a run as `langmarl parl train` does: the env's registered
    # training hooks anneal λ, so a parallel_tasks config trained either way gets the curve.
    from typer.testing import CliRunner

    from langmarl.cli import build_app
    from langmarl.testing.openai_stub import OpenAIStub

    with OpenAIStub(responder=_stub_reply) as stub:
        path = _parl_config_file(tmp_path, stub.llm_config(max_retries=0))
        result = CliRunner().invoke(build_app(), [*command, str(path)])
    assert result.exit_code == 0, result.output
    document = json.loads((tmp_path / "runs" / "parl" / CURVES_FILE).read_text())
    assert [p["lambda1"] for p in document["curve"]] == pytest.approx([0.1, 0.05])


def test_build_trainer_adds_the_env_hooks_once(tmp_path: Path) -> None:
    from langmarl.api import build_trainer
    from langmarl.parl.language import build_parl_trainer
    from langmarl.trainer.callbacks import LoggingCallback

    config = ParallelTasksConfig(exp_name="p", runs_dir=str(tmp_path), llm="local")
    for trainer in (build_trainer(config), build_parl_trainer(config)):
        parl = [c for c in trainer.callbacks if isinstance(c, PARLCallback)]
        assert len(parl) == 1 and parl[0].env is trainer.env
    custom = build_trainer(config, callbacks=[LoggingCallback()])
    assert [type(c) for c in custom.callbacks] == [LoggingCallback, PARLCallback]


def test_parl_language_run_is_listed_with_its_kind(tmp_path: Path) -> None:
    config = ParallelTasksConfig(
        exp_name="parl", runs_dir=str(tmp_path), num_iterations=1,
        trajectories_per_iteration=2, seed=1,
    )  # fmt: skip
    llm = ScriptedLLM(_reply, config=scripted_config(max_retries=0))
    env = make_parallel_tasks(config, llm=llm)
    MonteCarloTrainer(
        config, env, CentralizedCritic(config, llm=llm),
        PolicyGradientOptimizer(scripted_config(), llm=llm),
        callbacks=env.training_callbacks(),
    ).train()  # fmt: skip
    [summary] = find_runs(tmp_path)
    assert (summary.kind, summary.status, summary.progress) == (
        "parl_language", "completed", "1/1 iterations"
    )  # fmt: skip


def test_evaluation_scores_every_checkpoint_at_the_end_of_the_schedule(tmp_path: Path) -> None:
    """`langmarl eval` on a parallel_tasks run: λ at the end of training, not at step 0,
    for the initial and the final policies alike."""
    from langmarl.api import build_trainer
    from langmarl.testing.openai_stub import OpenAIStub
    from langmarl.trainer.evaluation import compare_run

    responder = lambda body: _reply_to(str(body["messages"][-1]["content"]))  # noqa: E731
    with OpenAIStub(responder=responder) as stub:
        config = ParallelTasksConfig(
            exp_name="parl", runs_dir=str(tmp_path), num_iterations=2,
            trajectories_per_iteration=2, seed=1, llm=stub.llm_config(),
        )  # fmt: skip
        build_trainer(config).train()
        compare_run(tmp_path / "parl", split="train", episodes=2)
    for iteration in (0, 2):
        record = json.loads(
            (tmp_path / "parl" / f"evals/train_iter_{iteration:04d}.json").read_text()
        )
        steps = {t["metadata"]["training_step"] for t in record["trajectories"]}
        assert steps == {2}, (iteration, steps)
