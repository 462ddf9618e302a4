"""`CentralizedCritic`: one LLM judges the whole team's episode, globally or per agent."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING

from langmarl.core.aio import run_sync
from langmarl.core.base import BaseCritic
from langmarl.core.errors import ConfigError, LLMError
from langmarl.core.records import AgentId, Evaluation, Policies, Trajectory
from langmarl.llm.client import LLMClient
from langmarl.llm.tracker import UsageLedger
from langmarl.textgrad import prompts
from langmarl.textgrad.credit import parse_credit
from langmarl.textgrad.formatter import TrajectoryFormatter
from langmarl.textgrad.grounding import episode_facts, format_facts

if TYPE_CHECKING:
    from langmarl.config.base import BaseConfig

log = logging.getLogger(__name__)
PARADIGMS = ("central_global", "central_credit")


def load_templates(prompts_dir: str | Path | None) -> dict[str, str]:
    """The critic's templates: the built-in ones, replaced by files found in
    ``prompts_dir`` (``critic_system.txt``, ``central_global.txt``, ``central_credit.txt``).

    Raises:
        ConfigError: if ``prompts_dir`` is given but is not a directory.
    """
    templates = {
        "system": prompts.CRITIC_SYSTEM,
        "central_global": prompts.CRITIC_GLOBAL,
        "central_credit": prompts.CRITIC_CREDIT,
    }
    if prompts_dir is None:
        return templates
    folder = Path(prompts_dir)
    if not folder.is_dir():
        raise ConfigError(
            f"prompts_dir {str(folder)!r} is not a directory; give a folder holding any of "
            f"{', '.join(prompts.CRITIC_TEMPLATE_FILES.values())}."
        )
    for name, file_name in prompts.CRITIC_TEMPLATE_FILES.items():
        path = folder / file_name
        if path.is_file():
            templates[name] = path.read_text(encoding="utf-8")
    return templates


def format_roles(agent_ids: list[AgentId], roles: dict[AgentId, str] | None) -> str:
    """One line per agent: ``- id: role``."""
    roles = roles or {}
    return "\n".join(
        f"- {agent_id}: {roles[agent_id]}" if roles.get(agent_id) else f"- {agent_id}"
        for agent_id in agent_ids
    )


class CentralizedCritic(BaseCritic):
    """Evaluates multi-agent episodes with an LLM, in one of two paradigms.

    ``central_global``: one evaluation of the team, given to every agent.
    ``central_credit``: per-agent causal credit, parsed by
    :func:`~langmarl.textgrad.credit.parse_credit` (JSON, then ``[agent]`` markers, then the
    documented fallback: the whole reply for every agent, ``parse_status="fallback"``).

    With ``grounded_feedback`` other than ``off``, the prompt includes the verifier's facts
    recorded in the episode (see :mod:`langmarl.textgrad.grounding`).

    Args:
        config: Run config; ``paradigm`` and ``grounded_feedback`` are used.
        prompts_dir: Folder with template files overriding the built-in prompts
            (see :func:`load_templates`).
        llm: The critic's client (a run's assembly passes the one of role ``critic``);
            without it, one for ``config.get_critic_llm()`` is made, as the reference
            constructor ``CentralizedCritic(config)`` does.
        ledger: Usage ledger for that default client (calls recorded as role ``critic``).
    """

    llm: LLMClient

    def __init__(
        self,
        config: BaseConfig,
        prompts_dir: str | Path | None = None,
        *,
        llm: LLMClient | None = None,
        ledger: UsageLedger | None = None,
    ) -> None:
        self.config = config
        self.paradigm = str(config.paradigm)
        if self.paradigm not in PARADIGMS:
            raise ConfigError(f"paradigm must be one of {PARADIGMS}, got {self.paradigm!r}.")
        self.grounded = config.grounded_feedback != "off"
        self.templates = load_templates(prompts_dir)
        self.llm = llm or LLMClient(config.get_critic_llm(), role="critic", ledger=ledger)

    def build_prompt(
        self,
        trajectory: Trajectory,
        context: str = "",
        roles: dict[AgentId, str] | None = None,
    ) -> str:
        """The user prompt for ``trajectory`` (pure)."""
        agent_ids = trajectory.all_agent_ids()
        credit = self.paradigm == "central_credit"
        formatted = (
            TrajectoryFormatter.format_for_credit_assignment(trajectory)
            if credit
            else TrajectoryFormatter.format_trajectory(trajectory)
        )
        example = json.dumps({agent_id: "..." for agent_id in agent_ids})
        facts = format_facts(episode_facts(trajectory)) if self.grounded else ""
        template = self.templates[self.paradigm]
        prompt = Template(template).safe_substitute(
            context=context or "A team of AI agents works on a task in sequence.",
            roles=format_roles(agent_ids, roles),
            trajectory=formatted,
            reward=f"{trajectory.reward:.3f}",
            agent_ids=", ".join(agent_ids),
            json_example=example,
            facts=facts,
        )
        has_slot = "$facts" in template or "${facts}" in template
        if facts and not has_slot:  # a custom template from prompts_dir without the slot
            prompt = f"{prompt.rstrip()}\n{facts}"
        return prompt

    def parse(self, response: str, agent_ids: list[AgentId]) -> Evaluation:
        """The evaluation for a critic reply (pure)."""
        if self.paradigm == "central_global":
            per_agent = {agent_id: response.strip() for agent_id in agent_ids}
            return Evaluation(raw_response=response, paradigm=self.paradigm, per_agent=per_agent)
        per_agent, status = parse_credit(response, agent_ids)
        if status == "fallback":
            log.debug("critic reply had no per-agent credit; every agent gets the whole reply")
        return Evaluation(
            raw_response=response, paradigm=self.paradigm, per_agent=per_agent, parse_status=status
        )

    async def aevaluate(
        self,
        trajectory: Trajectory,
        policies: Policies,
        context: str = "",
        roles: dict[AgentId, str] | None = None,
    ) -> Evaluation:
        """Evaluate one episode. An LLM failure (after the client's retries) returns an
        evaluation with ``error`` set and no feedback, instead of raising."""
        prompt = self.build_prompt(trajectory, context, roles)
        try:
            response = await self.llm.achat(self.templates["system"], prompt)
        except LLMError as exc:
            return Evaluation(paradigm=self.paradigm, error=str(exc))
        return self.parse(response, trajectory.all_agent_ids() or list(policies))

    def evaluate(self, trajectory: Trajectory, policies: Policies) -> Evaluation:
        """Evaluate a trajectory; returns ``raw_response``, ``paradigm`` and ``per_agent``
        (readable as a dict too: ``evaluation["per_agent"]``)."""
        return run_sync(self.aevaluate(trajectory, policies))
