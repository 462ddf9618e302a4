"""Assembling a language-space run from a config: the one way every entry point does it.

``langmarl.train``/``build_trainer``, ``langmarl train``, ``langmarl parl train`` and the
held-out evaluation all go through here, so a run on an environment gets the same parts
whichever way it is started:

1. one LLM client per role (``actor``, ``critic``, ``optimizer``, ``judge``) recording into
   one usage ledger (:func:`role_clients`);
2. the environment from its registry spec, with the actor (and judge) clients
   (:func:`assemble_env`);
3. the critic and optimizer, given their clients;
4. the trainer — :class:`MonteCarloTrainer`, or :class:`~langmarl.trainer.pool.search.
   PoolTrainer` for ``search: "pool"`` — with the caller's callbacks plus the training
   hooks the environment's spec names (``parallel_tasks``: λ annealing and PARL curves).
"""

from __future__ import annotations

from dataclasses import dataclass

from langmarl.config.base import BaseConfig
from langmarl.core.base import BaseEnvironment
from langmarl.envs.registry import ENV_REGISTRY, EnvRegistry
from langmarl.llm.client import LLMClient
from langmarl.llm.tracker import UsageLedger
from langmarl.store import LocalStore
from langmarl.textgrad.critic import CentralizedCritic
from langmarl.textgrad.optimizer import PolicyGradientOptimizer
from langmarl.trainer.callbacks import Callback, CheckpointCallback, LoggingCallback
from langmarl.trainer.monte_carlo import MonteCarloTrainer


@dataclass(frozen=True)
class RoleClients:
    """The LLM clients of a run, one per role, all recording into ``ledger``."""

    actor: LLMClient
    critic: LLMClient
    optimizer: LLMClient
    judge: LLMClient
    ledger: UsageLedger


def role_clients(config: BaseConfig, ledger: UsageLedger | None = None) -> RoleClients:
    """A client per role from ``config``'s LLM fields (the judge uses the critic's LLM)."""
    ledger = ledger or UsageLedger()
    critic = LLMClient(config.get_critic_llm(), role="critic", ledger=ledger)
    return RoleClients(
        actor=LLMClient(config.get_actor_llm(), role="actor", ledger=ledger),
        critic=critic,
        optimizer=LLMClient(config.get_optimizer_llm(), role="optimizer", ledger=ledger),
        judge=critic.with_role("judge"),
        ledger=ledger,
    )


def assemble_env(
    config: BaseConfig, clients: RoleClients, registry: EnvRegistry | None = None
) -> BaseEnvironment:
    """The environment ``config.env`` names, with the actor client (and the judge client,
    for an environment that has an empty ``judge_llm`` slot)."""
    env: BaseEnvironment = (registry or ENV_REGISTRY).make(config.env, config)
    env.set_llm(clients.actor)
    if getattr(env, "judge_llm", "absent") is None:
        env.judge_llm = clients.judge  # type: ignore[attr-defined]
    return env


def assemble_trainer(
    config: BaseConfig,
    *,
    run_id: str | None = None,
    callbacks: list[Callback] | None = None,
    store: LocalStore | None = None,
    registry: EnvRegistry | None = None,
) -> MonteCarloTrainer:
    """The trainer for ``config`` (see the module docstring).

    Args:
        config: The run config.
        run_id: Run directory name (default ``config.exp_name``; the same id resumes).
        callbacks: Trainer callbacks (default: logging + checkpoint export); the
            environment's training hooks are added after them.
        store: Where runs live (default ``LocalStore(config.experiment_dir)``).
        registry: Environment registry (default: the process-wide one).

    Raises:
        ConfigError: for an unknown or not yet built environment.
    """
    registry = registry or ENV_REGISTRY
    spec = registry.spec(config.env)
    spec.load()  # an unknown or unbuilt env is reported before any client is made
    clients = role_clients(config)
    env = assemble_env(config, clients, registry)
    critic = CentralizedCritic(config, llm=clients.critic)
    optimizer = PolicyGradientOptimizer(config.get_optimizer_llm(), llm=clients.optimizer)
    chosen = [LoggingCallback(), CheckpointCallback()] if callbacks is None else list(callbacks)
    hooks = spec.training_callbacks(env, config)
    trainer_class = MonteCarloTrainer
    if config.search == "pool":
        from langmarl.trainer.pool.search import PoolTrainer

        trainer_class = PoolTrainer
    return trainer_class(
        config,
        env,
        critic,
        optimizer,
        store=store,
        callbacks=[*chosen, *hooks],
        run_id=run_id,
        ledger=clients.ledger,
    )
