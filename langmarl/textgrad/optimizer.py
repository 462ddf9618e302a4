"""`PolicyGradientOptimizer`: language gradients from evaluations, and policy updates."""

from __future__ import annotations

import logging
import re
from string import Template
from typing import Literal

from langmarl.core.aio import run_sync
from langmarl.core.base import BaseOptimizer
from langmarl.core.errors import LLMError
from langmarl.core.records import PolicyUpdate
from langmarl.llm.client import LLMClient
from langmarl.llm.config import LLMConfig
from langmarl.llm.tracker import UsageLedger
from langmarl.llm.types import system_user_messages
from langmarl.textgrad import prompts
from langmarl.textgrad.credit import parse_credit
from langmarl.textgrad.tidy import tidy_feedback

log = logging.getLogger(__name__)
CONTEXT_CHARS = 800
"""Task context given to gradient prompts is cut to this many characters."""
MIN_REWRITE_CHARS = 20
"""A rewritten policy shorter than this is rejected (the fallback is used)."""


def _fill(template: str, **values: object) -> str:
    return Template(template).safe_substitute({k: str(v) for k, v in values.items()})


def _clean_rewrite(text: str) -> str:
    """Strip code fences and a leading "Here is …:" line from a rewritten policy."""
    text = text.strip()
    if text.startswith("```"):
        text = text.strip("`").split("\n", 1)[-1].strip()
    first, _, rest = text.partition("\n")
    if rest and first.rstrip().endswith(":") and len(first) < 80:
        text = rest.strip()
    return text


def rewrite_problem(text: str, finish_reason: str, agent_name: str = "") -> str | None:
    """Why a rewritten policy cannot be used, or ``None`` if it can: it was cut off at the
    token limit, is too short, is JSON/code rather than instructions, or does not address
    the agent at all (neither "you"/"your" nor the agent's name: a small model's rewrite is
    then often an answer or a summary, not a system prompt)."""
    if finish_reason == "length":
        return "rewrite was cut off at max_tokens"
    if len(text) < MIN_REWRITE_CHARS:
        return f"rewrite too short ({len(text)} chars)"
    if text.lstrip().startswith(("{", "[", "<")):
        return "rewrite is not a prompt (starts like JSON/markup)"
    words = set(re.findall(r"[a-z]+", text.lower()))
    named = bool(agent_name) and agent_name.lower() in text.lower()
    if not ({"you", "your"} & words) and not named:
        return "rewrite does not address the agent (no 'you', no agent name): not a system prompt"
    return None


class PolicyGradientOptimizer(BaseOptimizer):
    """LLM-based policy optimizer: gradients (improvement instructions) and updates.

    The default update rewrites the policy into a new self-contained prompt with the LLM;
    if that fails (LLM error, or a reply that is cut off, too short, JSON/markup, or not
    addressed to the agent; see :func:`rewrite_problem`) it falls back to
    :meth:`apply_gradient`. The reference implementation only appends; rewriting keeps
    policies from growing an ever longer list of patches.

    Args:
        llm_config: The optimizer model.
        llm: The optimizer's client (a run's assembly passes the one of role
            ``optimizer``); without it, one for ``llm_config`` is made, as the reference
            constructor ``PolicyGradientOptimizer(llm_config)`` does.
        ledger: Usage ledger for that default client.
        update: ``"rewrite"`` (default) or ``"append"`` (``apply_gradient`` only).
        aggregate_with_llm: Merge several episodes' gradients with the LLM (keeping what
            repeats, dropping one-off noise); otherwise join them (static method).
    """

    llm: LLMClient

    def __init__(
        self,
        llm_config: LLMConfig,
        *,
        llm: LLMClient | None = None,
        ledger: UsageLedger | None = None,
        update: Literal["rewrite", "append"] = "rewrite",
        aggregate_with_llm: bool = True,
    ) -> None:
        self.llm_config = llm_config
        self.llm = llm or LLMClient(llm_config, role="optimizer", ledger=ledger)
        self.update = update
        self.aggregate_with_llm = aggregate_with_llm

    # -- gradients --------------------------------------------------------------------------
    async def agenerate_gradient(
        self, policy: str, evaluation: str, context: str, agent_name: str = "agent"
    ) -> str:
        """Async :meth:`generate_gradient`.

        Raises:
            LLMError: after the client's retries.
        """
        user = _fill(
            prompts.GRADIENT_USER,
            agent_name=agent_name,
            policy=policy,
            context=context[:CONTEXT_CHARS],
            evaluation=evaluation,
        )
        return tidy_feedback(await self.llm.achat(prompts.GRADIENT_SYSTEM, user))

    def generate_gradient(
        self, policy: str, evaluation: str, context: str, agent_name: str = "agent"
    ) -> str:
        """A 2-4 sentence improvement instruction for one agent (repeated sentences and a
        cut-off last sentence removed, see :func:`~langmarl.textgrad.tidy.tidy_feedback`).

        Args:
            policy: The agent's current policy.
            evaluation: The critic's feedback for this agent.
            context: Task context (cut to 800 characters).
            agent_name: The agent's id (shown to the LLM and in logs).
        """
        return run_sync(self.agenerate_gradient(policy, evaluation, context, agent_name))

    async def agenerate_shared_gradient(self, evaluation: str, task_context: str) -> str:
        """Async :meth:`generate_shared_gradient`."""
        user = _fill(
            prompts.SHARED_GRADIENT_USER,
            context=task_context[:CONTEXT_CHARS],
            evaluation=evaluation,
        )
        return tidy_feedback(await self.llm.achat(prompts.GRADIENT_SYSTEM, user))

    def generate_shared_gradient(self, evaluation: str, task_context: str) -> str:
        """One gradient for every agent (``central_global``); context cut to 800 chars."""
        return run_sync(self.agenerate_shared_gradient(evaluation, task_context))

    # -- aggregation ------------------------------------------------------------------------
    @staticmethod
    def aggregate_gradients(gradients: list[str]) -> str:
        """Join gradients from several episodes with numbered separator markers."""
        kept = [g.strip() for g in gradients if g and g.strip()]
        if len(kept) <= 1:
            return kept[0] if kept else ""
        return "\n\n".join(
            f"{prompts.GRADIENT_SEPARATOR.format(index=i)}\n{text}"
            for i, text in enumerate(kept, 1)
        )

    async def aaggregate(self, gradients: list[str], agent_name: str = "agent") -> str:
        """Merge gradients with the LLM (one call; only when there are two or more). On an
        LLM error or an empty reply, the joined gradients (:meth:`aggregate_gradients`)."""
        kept = [g.strip() for g in gradients if g and g.strip()]
        if len(kept) <= 1 or not self.aggregate_with_llm:
            return self.aggregate_gradients(kept)
        listing = "\n".join(f"{i}. {g}" for i, g in enumerate(kept, 1))
        user = _fill(
            prompts.AGGREGATE_USER, agent_name=agent_name, count=len(kept), gradients=listing
        )
        try:
            merged = tidy_feedback(await self.llm.achat(prompts.AGGREGATE_SYSTEM, user))
        except LLMError as exc:
            log.warning("aggregating gradients for %s failed (%s); joining them", agent_name, exc)
            return self.aggregate_gradients(kept)
        return merged or self.aggregate_gradients(kept)

    # -- updates ----------------------------------------------------------------------------
    @staticmethod
    def apply_gradient(base_policy: str, gradient: str) -> str:
        """Return ``base_policy`` with a ``[CASE-SPECIFIC FEEDBACK]`` section holding
        ``gradient``. An existing section is replaced, never accumulated; the part before
        it is kept unchanged. An empty gradient removes the section."""
        base = base_policy.split(prompts.FEEDBACK_HEADER, 1)[0].rstrip()
        if not gradient.strip():
            return base
        return f"{base}\n\n{prompts.FEEDBACK_HEADER}\n{gradient.strip()}"

    async def aupdate_policy(
        self, policy: str, gradient: str, agent_name: str = "agent"
    ) -> PolicyUpdate:
        """Update one policy: LLM rewrite (default), else :meth:`apply_gradient`. No
        gradient keeps the policy (method ``kept``)."""
        if not gradient.strip():
            return PolicyUpdate(agent_id=agent_name, method="kept", new_policy=policy)
        if self.update == "append":
            new = self.apply_gradient(policy, gradient)
            return PolicyUpdate(
                agent_id=agent_name, method="append", new_policy=new, aggregated_gradient=gradient
            )
        base = policy.split(prompts.FEEDBACK_HEADER, 1)[0].rstrip()
        user = _fill(prompts.REWRITE_USER, agent_name=agent_name, policy=base, gradient=gradient)
        messages = system_user_messages(prompts.REWRITE_SYSTEM, user)
        try:
            result = await self.llm.acomplete(messages)
            rewritten = _clean_rewrite(result.text)
            error = rewrite_problem(rewritten, result.finish_reason, agent_name)
            if error is None:
                return PolicyUpdate(
                    agent_id=agent_name,
                    method="rewrite",
                    new_policy=rewritten,
                    aggregated_gradient=gradient,
                )
        except LLMError as exc:
            error = str(exc)
        log.debug("policy rewrite for %s failed (%s); appending the gradient", agent_name, error)
        return PolicyUpdate(
            agent_id=agent_name,
            method="append",
            new_policy=self.apply_gradient(policy, gradient),
            aggregated_gradient=gradient,
            error=error,
        )

    @staticmethod
    def parse_credit_response(response: str, agent_names: list[str]) -> dict[str, str]:
        """Per-agent evaluations from a credit-assignment reply: JSON, then ``[agent]``
        markers, else the whole reply for every agent (see :mod:`langmarl.textgrad.credit`)."""
        return parse_credit(response, agent_names)[0]
