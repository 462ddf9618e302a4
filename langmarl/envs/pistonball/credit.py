"""Credit by region: the critic judges contiguous groups of pistons instead of each piston.

With 20 pistons, per-piston credit asks the critic for 20 sections; pistons next to each
other usually face the same situation, so ``credit="region"`` asks for one section per
region (``region_0`` = the ``region_size`` pistons next to the wall, …) and gives every
piston its region's feedback. Checkpoints, policies and gradients stay per piston: only the
critic's view is grouped.

:class:`RegionCredit` wraps any critic: it rebuilds the episode's summary by region from
the per-cycle log (``metadata["log"]``), lets the wrapped critic judge that (its markers are
``[region_k]``), and maps each region's feedback back to the region's pistons. A region
the reply does not mention gets what the wrapped critic's parser gives an unmentioned agent
(the whole reply).

The environment's registry entry installs it through its training hook
(:func:`pistonball_training_hooks`): environments sit below the trainer and cannot import
its ``Callback`` class, so :class:`RegionCreditHook` implements the hooks it needs and
answers every other ``on_*`` hook with a no-op.
"""

from __future__ import annotations

from collections.abc import Callable
from string import Template
from typing import TYPE_CHECKING, Any

from langmarl.core.aio import run_sync
from langmarl.core.base import BaseCritic
from langmarl.core.records import AgentId, Evaluation, Policies, Trajectory
from langmarl.envs.pistonball import prompts
from langmarl.envs.pistonball.summary import Groups, records_from_log, summarise

if TYPE_CHECKING:
    from langmarl.config.envs import PistonballConfig
    from langmarl.envs.pistonball.env import PistonballEnv
    from langmarl.llm.client import LLMClient


def region_trajectory(trajectory: Trajectory, regions: Groups, segments: int) -> Trajectory:
    """``trajectory`` summarised by region (steps and ``agent_ids`` are the regions')."""
    meta = trajectory.metadata
    steps = summarise(
        records_from_log(meta["log"]),
        regions,
        segments=segments,
        start_heights=list(meta["start_heights"]),
        start_ball=float(meta["start_ball_x"]),
        continuous=meta.get("action_mode") == "continuous",
    )
    return trajectory.model_copy(update={"steps": steps, "agent_ids": list(regions)})


def region_roles(regions: Groups) -> dict[AgentId, str]:
    """Region id → which pistons it groups."""
    return {
        region: Template(prompts.REGION_ROLE).substitute(
            first=f"piston_{members[0]}", last=f"piston_{members[-1]}"
        )
        for region, members in regions.items()
    }


class RegionCredit(BaseCritic):
    """A critic judging regions of pistons, for per-piston training (see the module
    docstring).

    Args:
        critic: The critic to wrap (e.g. ``CentralizedCritic``).
        regions: Region id → piston indices (:meth:`PistonballEnv.regions`).
        segments: Segments per region in the critic's view (``critic_segments``).
    """

    def __init__(self, critic: BaseCritic, regions: Groups, segments: int) -> None:
        self.critic = critic
        self.regions = regions
        self.segments = segments

    @property
    def llm(self) -> LLMClient | None:
        """The wrapped critic's client (the trainer records its usage as ``critic``)."""
        return self.critic.llm

    @llm.setter
    def llm(self, client: LLMClient | None) -> None:
        self.critic.llm = client

    async def aevaluate(
        self,
        trajectory: Trajectory,
        policies: Policies,
        context: str = "",
        roles: dict[AgentId, str] | None = None,
    ) -> Evaluation:
        grouped = region_trajectory(trajectory, self.regions, self.segments)
        region_policies = {region: "" for region in self.regions}
        verdict = await self.critic.aevaluate(
            grouped, region_policies, context, region_roles(self.regions)
        )
        per_piston = {
            f"piston_{index}": verdict.per_agent[region]
            for region, members in self.regions.items()
            if region in verdict.per_agent
            for index in members
        }
        return verdict.model_copy(update={"per_agent": per_piston})

    def evaluate(self, trajectory: Trajectory, policies: Policies) -> Evaluation:
        return run_sync(self.aevaluate(trajectory, policies))


class RegionCreditHook:
    """Training hook: wraps the trainer's critic in :class:`RegionCredit` before the first
    iteration it runs (once). Other ``on_*`` hooks do nothing."""

    def __init__(self, env: PistonballEnv) -> None:
        self.env = env

    def on_iteration_start(self, iteration: int, trainer: Any) -> None:
        if not isinstance(trainer.critic, RegionCredit):
            segments = self.env.config.critic_segments
            trainer.critic = RegionCredit(trainer.critic, self.env.regions(), segments)

    def __getattr__(self, name: str) -> Callable[..., None]:
        if name.startswith("on_"):
            return lambda *args, **kwargs: None
        raise AttributeError(name)


def pistonball_training_hooks(
    env: PistonballEnv, config: PistonballConfig | None = None
) -> list[Any]:
    """The registry's ``training_hooks`` for ``pistonball``: region credit when the config
    asks for it, else nothing."""
    credit = config.credit if config is not None else env.config.credit
    return [RegionCreditHook(env)] if credit == "region" else []
