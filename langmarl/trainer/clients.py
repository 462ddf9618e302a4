"""The LLM clients of a language run and the one usage ledger they record into.

A run has one client per role — ``actor`` (the env's agents), ``critic``, ``optimizer`` and
``judge`` (an env that :attr:`~langmarl.core.base.BaseEnvironment.uses_judge`) — all
recording into one :class:`UsageLedger`, so a run's usage is reported by role. They are made
here and nowhere else, in one of two ways:

- :meth:`RoleClients.from_config`: from the config's LLM fields, before the parts exist
  (the run's assembly, :mod:`langmarl.trainer.assembly`, builds the parts with them);
- :meth:`RoleClients.of_parts`: for parts the caller built (the reference API's
  ``MonteCarloTrainer(config, env, critic, optimizer)``): each part's own client, made to
  record into the run's ledger under its role, and an actor client from the config for an
  env that has none.

:meth:`RoleClients.equip` then gives each part its client; the trainer reads
:attr:`RoleClients.ledger` and never makes a client itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from langmarl.config.base import BaseConfig
from langmarl.core.base import BaseCritic, BaseEnvironment, BaseOptimizer
from langmarl.core.secrets import environment_secrets, llm_secrets
from langmarl.llm.client import LLMClient
from langmarl.llm.config import LLMConfig
from langmarl.llm.tracker import UsageLedger


def recording(client: LLMClient | None, role: str, ledger: UsageLedger) -> LLMClient | None:
    """``client`` recording into ``ledger`` under ``role`` (a client that already records
    into a ledger is kept as it is: its caller chose where its usage goes)."""
    if client is None or client.ledger is not None:
        return client
    return LLMClient(client.config, role=role, ledger=ledger, backend=client.backend)


@dataclass(frozen=True)
class RoleClients:
    """The LLM clients of a run, one per role, recording into ``ledger``.

    A role whose part calls no LLM (a custom critic or optimizer, an env without a judge)
    has ``None``.
    """

    actor: LLMClient
    critic: LLMClient | None
    optimizer: LLMClient | None
    judge: LLMClient | None
    ledger: UsageLedger

    @classmethod
    def from_config(cls, config: BaseConfig, ledger: UsageLedger | None = None) -> RoleClients:
        """A client per role from ``config``'s LLM fields (the judge uses the critic's
        model and backend)."""
        ledger = ledger or UsageLedger()
        critic = LLMClient(config.get_critic_llm(), role="critic", ledger=ledger)
        return cls(
            actor=LLMClient(config.get_actor_llm(), role="actor", ledger=ledger),
            critic=critic,
            optimizer=LLMClient(config.get_optimizer_llm(), role="optimizer", ledger=ledger),
            judge=critic.with_role("judge"),
            ledger=ledger,
        )

    @classmethod
    def of_parts(
        cls,
        config: BaseConfig,
        env: BaseEnvironment,
        critic: BaseCritic,
        optimizer: BaseOptimizer,
        ledger: UsageLedger | None = None,
    ) -> RoleClients:
        """The clients of parts built by the caller, recording into ``ledger`` (default:
        the ledger one of their clients records into, else a new one). An env without an
        actor client gets one for ``config.get_actor_llm()``; an env that uses a judge and
        has none gets the critic's client under the role ``judge`` (same model and backend,
        as :meth:`from_config` gives it)."""
        own = [env.llm, env.judge_llm, critic.llm, optimizer.llm]
        ledger = ledger or next((c.ledger for c in own if c and c.ledger), None) or UsageLedger()
        actor = recording(env.llm, "actor", ledger)
        critic_client = recording(critic.llm, "critic", ledger)
        judge = recording(env.judge_llm, "judge", ledger) if env.uses_judge else None
        if env.uses_judge and judge is None and critic_client is not None:
            judge = critic_client.with_role("judge")
        return cls(
            actor=actor or LLMClient(config.get_actor_llm(), role="actor", ledger=ledger),
            critic=critic_client,
            optimizer=recording(optimizer.llm, "optimizer", ledger),
            judge=judge,
            ledger=ledger,
        )

    def equip(self, env: BaseEnvironment) -> BaseEnvironment:
        """Give ``env`` the actor client, and the judge client when it uses a judge and has
        none of its own; returns ``env``."""
        env.set_llm(self.actor)
        if env.uses_judge and (env.judge_llm is None or env.judge_llm.ledger is None):
            env.judge_llm = self.judge
        return env

    def equip_parts(
        self, env: BaseEnvironment, critic: BaseCritic, optimizer: BaseOptimizer
    ) -> None:
        """:meth:`equip` ``env`` and give the critic and the optimizer their clients."""
        self.equip(env)
        if self.critic is not None:
            critic.llm = self.critic
        if self.optimizer is not None:
            optimizer.llm = self.optimizer

    def secrets(self, config: BaseConfig) -> set[str]:
        """What the run's files and logs must never show: the API keys of every client
        and of ``config``'s LLM fields, and the secrets in the environment variables."""
        clients = (self.actor, self.critic, self.optimizer, self.judge)
        models: list[LLMConfig | None] = [c.config for c in clients if c is not None]
        models += [config.llm, config.actor_llm, config.critic_llm, config.optimizer_llm]
        return llm_secrets(models) | environment_secrets()
