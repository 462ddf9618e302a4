"""The driver's side of ``placement="ray"``: the agents' actors in one placement group, and
the handle each :class:`~langmarl.magrpo.policy.Agent` calls them through.

Every call is sent at once and answered through :meth:`Pending.result`, so the rollout and
the update dispatch every agent before waiting for any: the agents sample and update side by
side on their own CPUs (or GPUs, or nodes). An actor that dies (SIGKILL, its node lost) ends
the call with :class:`AgentActorDied`, which fails the step; :meth:`RayAgents.close` (called
by the trainer when a run fails, and by ``trainer.close()``) kills every actor of the run and
frees its placement group, so no actor outlives its run.

Checkpoints: the driver names the folder in the run directory and the actor writes it there
itself. On one machine the file system is shared; a run over several machines needs
``output_dir`` on storage every node mounts at the same path (NFS, a cloud file system):
files are not shipped back as bytes, and :meth:`AgentHandle.save` fails with the fix when
the driver cannot see what an actor wrote.

With ``rollout_placement="apart"`` each agent also gets a rollout actor (:mod:`.engine`) in
a second placement group: :meth:`AgentHandle.generate` asks it for samples, and the agent's
actor pushes it the trained weights after each update.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langmarl.core.errors import ConfigError, LangmarlError
from langmarl.magrpo.config import TrainerConfig
from langmarl.magrpo.placement.cluster import check_resources, connect, ray_module
from langmarl.magrpo.placement.engine import RolloutWorker
from langmarl.magrpo.placement.worker import AgentWorker
from langmarl.magrpo.policy import Agent, Formatter, build_agents, default_formatter

log = logging.getLogger(__name__)

PLACEMENT_TIMEOUT_S = 120.0
"""How long the agents' placement group may wait for its resources before the run fails."""
STARTING = "its start"
RESUME = "resume from the last checkpoint: train(resume_from='latest') (CLI: --resume latest)"


class AgentActorDied(LangmarlError, RuntimeError):
    """An agent's Ray actor died (killed, out of memory, its node lost): the step it was in
    is lost, and the run resumes from its last checkpoint."""


class Pending:
    """The answer of one actor call, waited for by :meth:`result`."""

    def __init__(
        self, ref: Any, agent: str, what: str, check: Callable[[], None] | None = None
    ) -> None:
        self.ref, self.agent, self.what, self.check = ref, agent, what, check

    def result(self) -> Any:
        """Wait for the call's answer.

        Raises:
            AgentActorDied: if the actor died before answering.
        """
        ray = ray_module()
        try:
            value = ray.get(self.ref)
        except ray.exceptions.RayActorError as exc:
            cause = str(exc).strip().splitlines()[-1][:200] if str(exc).strip() else ""
            then = (
                "fix the cause and start again"  # the actor never built its agent
                if self.what == STARTING
                else f"the step is lost and the run's actors are stopped; {RESUME}"
            )
            raise AgentActorDied(
                f"{self.agent}'s Ray actor died during {self.what} ({type(exc).__name__}: "
                f"{cause}): {then}"
            ) from None
        if self.check is not None:
            self.check()
        return value


class AgentHandle:
    """What a driver-side :class:`Agent` calls: its actor's methods, each returning a
    :class:`Pending` (arguments and answers are tensors, lists and paths). ``rollout`` is
    the agent's rollout actor when it samples apart (``rollout_placement="apart"``)."""

    def __init__(self, actor: Any, name: str, group: RayAgents) -> None:
        self.actor, self.name, self.group = actor, name, group
        self.rollout: Any = None

    def _call(self, method: str, what: str, *args: Any, check: Any = None,
              rollout: bool = False) -> Pending:  # fmt: skip
        if self.group.closed:
            raise ConfigError(
                f"{self.name}'s Ray actor was stopped (trainer.close(), or a failed train()): "
                f"build a new trainer and {RESUME}"
            )
        if rollout:
            actor, name = self.rollout, f"{self.name}'s rollout"
        else:
            actor, name = self.actor, self.name
        return Pending(getattr(actor, method).remote(*args), name, what, check)

    def generate(
        self, prompts: Sequence[str], num_generations: int, greedy: bool, seed: int
    ) -> Pending:
        """Samples from the agent's rollout actor when it has one, else from its own."""
        return self._call("generate", "sampling", list(prompts), num_generations, greedy, seed,
                          rollout=self.rollout is not None)  # fmt: skip

    def update(self, parts: Sequence[Any]) -> Pending:
        return self._call("update", "its update", list(parts))

    def save(self, folder: Path, optimizer: bool) -> Pending:
        def check() -> None:
            if not folder.is_dir():
                raise ConfigError(
                    f"{self.name}'s actor wrote its checkpoint to {str(folder)!r}, which this "
                    "machine does not see: put output_dir on storage every Ray node mounts "
                    "at the same path"
                )

        return self._call("save", "a checkpoint", str(folder), optimizer, check=check)

    def load(self, folder: Path, optimizer: bool, checkpoint_name: str) -> Pending:
        return self._call("load", "loading a checkpoint", str(folder), optimizer,
                          checkpoint_name)  # fmt: skip

    def describe(self) -> Pending:
        return self._call("describe", STARTING)

    def critic(self, method: str, *args: Any) -> Pending:
        """Call ``method`` of the actor's critics (IAC/MAAC, :mod:`langmarl.magrpo.critic`)."""
        return self._call(method, "its critic's work", *args)


class RayAgents:
    """The agents of one run as Ray actors, one bundle each in one placement group.

    Build with :meth:`start`; :attr:`agents` are driver-side :class:`Agent` records whose
    ``worker`` is their actor's :class:`AgentHandle`.
    """

    def __init__(self, started_ray: bool) -> None:
        self.started_ray = started_ray
        self.actors: list[Any] = []
        self.rollouts: list[Any] = []  # rollout_placement="apart": one per agent
        self.groups: list[Any] = []
        self.agents: list[Agent] = []
        self.details: list[dict[str, Any]] = []
        self.rollout_details: list[dict[str, Any]] = []
        self._handles: list[AgentHandle] = []
        self.closed = False

    @classmethod
    def start(
        cls,
        models: Sequence[Any],
        config: TrainerConfig,
        formatters: Sequence[Formatter] | None = None,
        tokenizers: Sequence[Any] | None = None,
        trainer: type | None = None,
    ) -> RayAgents:
        """Join the cluster, place one actor per agent and wait until each has built its
        agent (a model name loads on the actor's node; a loaded model is shipped once).

        Args:
            trainer: The trainer class; one whose ``ray_placement`` is false is refused
                before Ray starts.

        Raises:
            ConfigError: a trainer without Ray support, bad counts, an unreachable
                ``ray_address``, more GPUs or CPUs than the cluster has, or a placement group
                that does not fit in time.
        """
        if trainer is not None and not getattr(trainer, "ray_placement", False):
            raise ConfigError(
                f"placement='ray' is not supported by {trainer.__name__} yet (MAGRPO, IAC, "
                "MAAC and PARL GRPO so far, issue 41): set placement='process'"
            )
        count = config.num_agents
        if len(models) != count:
            raise ConfigError(
                f"got {len(models)} agents but num_agents is {count}: pass one model (or "
                "model name) per agent"
            )
        if tokenizers is None and not all(isinstance(m, str) for m in models):
            raise ConfigError(
                "agents were given as loaded models but tokenizers is None: pass "
                "tokenizers=[...] (one per agent) or give model names"
            )
        placed = cls(connect(config))
        try:
            placed._place(models, config, tokenizers)
            shown = list(formatters) if formatters is not None else [default_formatter] * count
            placed.agents = [placed._agent(i, shown[i]) for i in range(count)]
        except BaseException:
            placed.close()
            raise
        return placed

    def _place(
        self, models: Sequence[Any], config: TrainerConfig, tokenizers: Sequence[Any] | None
    ) -> None:
        ray = ray_module()
        check_resources(config, ray.cluster_resources())
        cpus, gpus = config.agent_num_cpus, config.agent_num_gpus
        group = self._group(config, cpus, gpus, "agents", "agent_num_cpus/agent_num_gpus")
        self.actors = _spawn(AgentWorker, group, models, config, tokenizers, cpus, gpus)
        handles = [AgentHandle(actor, f"agent-{i}", self) for i, actor in enumerate(self.actors)]
        self.details = [pending.result() for pending in [h.describe() for h in handles]]
        if config.rollout_placement == "apart":
            self._place_rollouts(models, config, tokenizers, handles)
        self._handles = handles
        for name, info in zip((h.name for h in handles), self.details, strict=True):
            log.info("%s: Ray actor pid %s on node %s (%s)", name, info["pid"],
                     info["node_id"][:8], info["device"])  # fmt: skip

    def _place_rollouts(
        self,
        models: Sequence[Any],
        config: TrainerConfig,
        tokenizers: Sequence[Any] | None,
        handles: Sequence[AgentHandle],
    ) -> None:
        """One rollout actor per agent in a placement group of their own, each attached to
        its agent's actor (which pushes it the weights once now, then after each update)."""
        cpus, gpus = config.rollout_num_cpus, config.rollout_num_gpus
        group = self._group(config, cpus, gpus, "rollout actors",
                            "rollout_num_cpus/rollout_num_gpus")  # fmt: skip
        self.rollouts = _spawn(RolloutWorker, group, models, config, tokenizers, cpus, gpus)
        described = [Pending(r.describe.remote(), f"{h.name}'s rollout", STARTING)
                     for r, h in zip(self.rollouts, handles, strict=True)]  # fmt: skip
        self.rollout_details = [pending.result() for pending in described]
        attached = [Pending(h.actor.attach_rollout.remote(r), h.name, STARTING)
                    for h, r in zip(handles, self.rollouts, strict=True)]  # fmt: skip
        for handle, rollout, info, pending in zip(handles, self.rollouts, self.rollout_details,
                                                  attached, strict=True):  # fmt: skip
            pushed = pending.result()
            log.info("%s: rollout actor pid %s on node %s, %.1f MB of weights pushed",
                     handle.name, info["pid"], info["node_id"][:8], pushed / 1e6)  # fmt: skip
            handle.rollout = rollout

    def _group(
        self, config: TrainerConfig, cpus: float, gpus: float, what: str, fields: str
    ) -> Any:
        """A placement group of one bundle per agent, ready (freed by :meth:`close`)."""
        from ray.util.placement_group import placement_group

        bundle = {"CPU": cpus, **({"GPU": gpus} if gpus else {})}
        group = placement_group([dict(bundle)] * config.num_agents,
                                strategy=config.placement_strategy)  # fmt: skip
        self.groups.append(group)
        if not group.wait(timeout_seconds=PLACEMENT_TIMEOUT_S):
            raise ConfigError(
                f"the Ray cluster could not place {config.num_agents} {what} of {bundle} with "
                f"placement_strategy={config.placement_strategy!r} in {PLACEMENT_TIMEOUT_S:g} "
                f"s: lower {fields}, use 'PACK', or add nodes"
            )
        return group

    def _agent(self, index: int, formatter: Formatter) -> Agent:
        info = self.details[index]
        return Agent(
            name=f"agent-{index}",
            model=None,
            tokenizer=None,
            formatter=formatter,
            device=info["device"],
            optimizer=None,
            uses_lora=info["uses_lora"],
            update_precision=info["update_precision"],
            worker=self._handles[index],
        )

    def close(self) -> None:
        """Kill every actor of the run, free its placement group and, when the run started
        Ray itself, shut it down. Safe to call twice."""
        if self.closed:
            return
        self.closed = True
        ray = ray_module()
        if not ray.is_initialized():
            return
        for actor in [*self.actors, *self.rollouts]:
            ray.kill(actor, no_restart=True)
        from ray.util.placement_group import remove_placement_group

        for group in self.groups:
            remove_placement_group(group)
        if self.started_ray:
            ray.shutdown()


def _spawn(
    worker: type,
    group: Any,
    models: Sequence[Any],
    config: TrainerConfig,
    tokenizers: Sequence[Any] | None,
    cpus: float,
    gpus: float,
) -> list[Any]:
    """One ``worker`` actor per model, the i-th in bundle i of ``group``."""
    ray = ray_module()
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    remote, actors = ray.remote(worker), []
    for index, source in enumerate(models):
        strategy = PlacementGroupSchedulingStrategy(group, index)
        options = {"num_cpus": cpus, "num_gpus": gpus, "max_restarts": 0,
                   "scheduling_strategy": strategy}  # fmt: skip
        tokenizer = tokenizers[index] if tokenizers is not None else None
        actors.append(remote.options(**options).remote(index, source, tokenizer, config))
    return actors


def place_agents(
    models: Sequence[Any],
    config: TrainerConfig,
    formatters: Sequence[Formatter] | None,
    tokenizers: Sequence[Any] | None,
    trainer: type,
) -> tuple[RayAgents | None, list[Agent]]:
    """The agents of a run where ``config.placement`` says: ``(None, agents)`` built in this
    process (:func:`~langmarl.magrpo.policy.build_agents`), or ``(actors, their agents)``
    on Ray (:meth:`RayAgents.start`)."""
    if config.placement == "process":
        return None, build_agents(models, config, formatters, tokenizers)
    placed = RayAgents.start(models, config, formatters, tokenizers, trainer)
    return placed, list(placed.agents)
