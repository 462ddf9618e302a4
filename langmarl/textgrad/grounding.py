"""Grounded feedback: the verifier's facts about an episode, for the critic's prompt.

Environments whose tasks have a verifier (a reference answer, tests) put short sentences in
``trajectory.metadata[FACTS_KEY]`` (``"verifier_facts"``, see
:mod:`langmarl.envs.language.facts`) and say so with a true ``has_verifier`` attribute.
The critic shows those facts, so its credit rests on what a program established (expected
vs got, format violations, failing tests) rather than on the critic model's reading alone.

Decisions (config field ``grounded_feedback``):

- ``auto`` (default): facts are shown wherever an episode has them; an environment without
  a verifier simply gets none (logged once at INFO).
- ``on``: the same, but an environment without a verifier is a :class:`ConfigError` before
  training starts — the user asked for something the task cannot give, and an error then
  costs nothing while a silent no-op would cost a whole run.
- ``off``: the critic sees the episode only.
"""

from __future__ import annotations

import logging
from string import Template
from typing import Any

from langmarl.core.errors import ConfigError
from langmarl.core.records import Trajectory
from langmarl.envs.language.facts import FACTS_KEY
from langmarl.textgrad import prompts

log = logging.getLogger(__name__)


def check_grounding(mode: str, env: Any) -> None:
    """Check ``grounded_feedback=mode`` against ``env``.

    Raises:
        ConfigError: for ``on`` with an environment that has no verifier.
    """
    if mode == "off" or getattr(env, "has_verifier", False):
        return
    name = getattr(env, "name", type(env).__name__)
    task_type = getattr(env, "task_type", None)
    what = f"{name!r} (task_type={task_type!r})" if task_type else repr(name)
    if mode == "on":
        raise ConfigError(
            f"grounded_feedback='on', but environment {what} has no verifier facts (its "
            "reward is not checked against a reference or tests); set grounded_feedback="
            "'auto' (facts where they exist) or 'off'."
        )
    log.info("grounded_feedback: environment %s has no verifier; the critic gets no facts", what)


def episode_facts(trajectory: Trajectory) -> list[str]:
    """The verifier's facts recorded in ``trajectory`` (``[]`` when none)."""
    facts = trajectory.metadata.get(FACTS_KEY) or []
    return [str(f) for f in facts if str(f).strip()] if isinstance(facts, list) else []


def format_facts(facts: list[str]) -> str:
    """The facts section of the critic's prompt ("" for no facts)."""
    if not facts:
        return ""
    listing = "\n".join(f"- {fact}" for fact in facts)
    return Template(prompts.CRITIC_FACTS).safe_substitute(facts=listing)
