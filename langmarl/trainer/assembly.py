"""Assembling a language-space run from a config: the one way every entry point does it.

``langmarl.train``/``build_trainer``, ``langmarl train``, ``langmarl parl train`` and the
held-out evaluation all go through here, so a run on an environment gets the same parts
whichever way it is started:

1. one LLM client per role (``actor``, ``critic``, ``optimizer``, ``judge``) recording into
   one usage ledger (:class:`~langmarl.trainer.clients.RoleClients`), made once and handed
   to every part and to the trainer;
2. the environment from its registry spec, with the actor (and judge) clients
   (:func:`assemble_env`);
3. the critic and optimizer, given their clients;
4. the trainer — :class:`MonteCarloTrainer`, or :class:`~langmarl.trainer.pool.search.
   PoolTrainer` for ``search: "pool"`` — with the caller's callbacks plus the training
   hooks the environment's spec names (``parallel_tasks``: λ annealing and PARL curves).
"""

from __future__ import annotations

from langmarl.config.base import BaseConfig
from langmarl.core.base import BaseEnvironment
from langmarl.envs.registry import ENV_REGISTRY, EnvRegistry
from langmarl.store import LocalStore
from langmarl.textgrad.critic import CentralizedCritic
from langmarl.textgrad.optimizer import PolicyGradientOptimizer
from langmarl.trainer.callbacks import Callback, CheckpointCallback, LoggingCallback
from langmarl.trainer.clients import RoleClients
from langmarl.trainer.monte_carlo import MonteCarloTrainer


def assemble_env(
    config: BaseConfig, clients: RoleClients, registry: EnvRegistry | None = None
) -> BaseEnvironment:
    """The environment ``config.env`` names, with the actor client (and the judge client,
    for an environment that uses a judge), its team sized by ``config.num_agents`` when it
    does not name its agents."""
    env: BaseEnvironment = (registry or ENV_REGISTRY).make(config.env, config)
    env.size_team(config.num_agents)
    return clients.equip(env)


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
        run_id: Run directory name (default: ``config.chosen_run_id()``; the same id
            resumes).
        callbacks: Trainer callbacks (default: logging + checkpoint export); the
            environment's training hooks are added after them.
        store: Where runs live (default ``LocalStore(config.runs_dir)``).
        registry: Environment registry (default: the process-wide one).

    Raises:
        ConfigError: for an unknown or not yet built environment.
    """
    registry = registry or ENV_REGISTRY
    spec = registry.spec(config.env)
    spec.load()  # an unknown or unbuilt env is reported before any client is made
    clients = RoleClients.from_config(config)
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
        clients=clients,
    )
