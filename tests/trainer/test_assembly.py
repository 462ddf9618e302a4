"""Assembling a run from a config: clients per role, env from its registry entry, hooks."""

from pathlib import Path
from typing import Any

import pytest
from trainer_fakes import EchoEnv

from langmarl.config.base import BaseConfig
from langmarl.core.errors import ConfigError
from langmarl.envs.registry import EnvRegistry
from langmarl.llm.config import LLMConfig
from langmarl.trainer.assembly import assemble_trainer
from langmarl.trainer.callbacks import Callback
from langmarl.trainer.clients import RoleClients


class JudgedEnv(EchoEnv):
    uses_judge = True

    def __init__(self, config: Any = None) -> None:
        super().__init__()
        self.config = config


class Hook(Callback):
    def __init__(self, env: Any, config: Any) -> None:
        self.env, self.config = env, config


def _registry() -> EnvRegistry:
    registry = EnvRegistry()
    registry.register("judged", JudgedEnv, training_hooks=lambda env, cfg: [Hook(env, cfg)])
    registry.register("later", None, description="a future env")
    return registry


def _config(tmp_path: Path, env: str = "judged") -> BaseConfig:
    return BaseConfig(env=env, llm="local", runs_dir=str(tmp_path), exp_name="a")


def test_every_part_gets_its_role_client_and_one_ledger(tmp_path: Path) -> None:
    config = _config(tmp_path)
    trainer = assemble_trainer(config, registry=_registry(), callbacks=[])
    env = trainer.env
    assert isinstance(env, JudgedEnv) and env.config is config
    roles = {
        "actor": env.llm, "judge": env.judge_llm,
        "critic": trainer.critic.llm, "optimizer": trainer.optimizer.llm,  # type: ignore[attr-defined]
    }  # fmt: skip
    assert {role: client.role for role, client in roles.items()} == {r: r for r in roles}
    assert {id(client.ledger) for client in roles.values()} == {id(trainer.ledger)}


def test_the_env_hooks_follow_the_callers_callbacks(tmp_path: Path) -> None:
    config = _config(tmp_path)
    mine = Callback()
    trainer = assemble_trainer(config, registry=_registry(), callbacks=[mine])
    assert trainer.callbacks[0] is mine and isinstance(trainer.callbacks[1], Hook)
    hook = trainer.callbacks[1]
    assert hook.env is trainer.env and hook.config is config  # type: ignore[attr-defined]


def test_an_env_not_built_yet_is_a_clear_error_before_any_client(tmp_path: Path) -> None:
    # a remote model without its key would fail first if clients were made first
    config = _config(tmp_path, env="later").model_copy(
        update={"llm": LLMConfig(name="x", model_string="x", api_key_env_var="NO_SUCH_KEY_XYZ")}
    )
    with pytest.raises(ConfigError, match="'later' is not built yet"):
        assemble_trainer(config, registry=_registry())


def test_role_clients_judge_shares_the_critic_model(tmp_path: Path) -> None:
    clients = RoleClients.from_config(_config(tmp_path).model_copy(update={"critic_llm": None}))
    assert clients.judge is not None and clients.critic is not None
    assert clients.judge.config is clients.critic.config and clients.judge.role == "judge"


def test_the_trainer_uses_the_assembled_clients_and_makes_none(tmp_path: Path) -> None:
    trainer = assemble_trainer(_config(tmp_path), registry=_registry(), callbacks=[])
    clients = trainer.clients
    assert trainer.env.llm is clients.actor and trainer.env.judge_llm is clients.judge
    assert trainer.critic.llm is clients.critic and trainer.optimizer.llm is clients.optimizer
    assert trainer.ledger is clients.ledger


def test_parts_built_by_the_caller_record_into_one_ledger_by_role(tmp_path: Path) -> None:
    from trainer_fakes import make_parts

    from langmarl.trainer.monte_carlo import MonteCarloTrainer

    config, _, critic, optimizer = make_parts(tmp_path)
    env = JudgedEnv(config)
    env.set_llm(critic.llm)  # one scripted client shared by every part, with no ledger
    trainer = MonteCarloTrainer(config, env, critic, optimizer, callbacks=[])
    clients = trainer.clients
    assert trainer.env.llm is clients.actor and trainer.env.judge_llm is clients.judge
    roles = {c.role: c for c in (clients.actor, clients.critic, clients.optimizer, clients.judge)}
    assert set(roles) == {"actor", "critic", "optimizer", "judge"}
    assert {id(c.ledger) for c in roles.values()} == {id(trainer.ledger)}
    assert clients.judge.backend is clients.critic.backend  # the critic's model, not a new one
