"""The reward author: intent -> criteria -> reward code -> review -> validate-and-fix.

Every step tolerates weak models: an unparseable reply counts as a failed attempt (with the
reason fed back), and when no attempt validates the caller gets ``None`` plus the errors, to
take the documented fallback (:func:`fallback_reward`) or stop with ``invalid_code``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from langmarl.core.errors import ParseError
from langmarl.p2p.agents import prompts
from langmarl.p2p.agents.parsing import extract_code
from langmarl.p2p.reward.env_specs import MujocoEnvSpec, get_env_spec
from langmarl.p2p.reward.validation import ValidationResult, validate_reward_code

if TYPE_CHECKING:
    from langmarl.llm.client import LLMClient
    from langmarl.p2p.design.demonstrations import RewardDemo

logger = logging.getLogger(__name__)

Validator = Callable[[str, str], ValidationResult]
"""(source, env_id) -> result; :func:`validate_reward_code` by default."""


@dataclass
class AuthoredReward:
    """The outcome of authoring or revising: validated code, or None and the errors seen."""

    source: str | None
    validation: ValidationResult | None = None
    errors: list[str] = field(default_factory=list)
    attempts: int = 0


def env_fields(spec: MujocoEnvSpec) -> dict[str, object]:
    """Template fields describing ``spec``."""
    return {
        "env_id": spec.env_id,
        "obs_dim": spec.obs_dim,
        "act_dim": spec.act_dim,
        "info_keys": ", ".join(spec.info_keys),
        "env_description": spec.description,
    }


def elaborate(llm: LLMClient, intent: str, spec: MujocoEnvSpec) -> str:
    """Behaviour criteria for ``intent``; the intent itself when the reply has none."""
    reply = llm.chat(
        prompts.ELABORATE_SYSTEM, prompts.ELABORATE_USER.format(intent=intent, **env_fields(spec))
    )
    lines = [line.strip() for line in reply.splitlines() if line.strip().startswith(("-", "*"))]
    return "\n".join(lines[:5]) if lines else f"- {intent}"


def write_reward(
    llm: LLMClient, intent: str, criteria: str, spec: MujocoEnvSpec,
    demos: Sequence[RewardDemo] = (),
) -> str:  # fmt: skip
    """One authoring call, each of ``demos`` (the most similar first) shown before it as an
    earlier request and its answer, the most similar last, nearest the request: a small
    model copies the turn closest to it (:mod:`~langmarl.p2p.design.demonstrations`).
    Raises ParseError when the reply holds no code."""
    user = prompts.AUTHOR_USER.format(intent=intent, criteria=criteria, **env_fields(spec))
    if not demos:
        return extract_code(llm.chat(prompts.AUTHOR_SYSTEM, user), "reward_fn")
    messages = [{"role": "system", "content": prompts.AUTHOR_SYSTEM}]
    for demo in reversed(demos):
        shown = prompts.AUTHOR_USER.format(intent=demo.intent, criteria=f"- {demo.intent}",
                                           **env_fields(get_env_spec(demo.env_id)))  # fmt: skip
        messages.append({"role": "user", "content": shown})
        messages.append({"role": "assistant", "content": f"```python\n{demo.code}```"})
    messages.append({"role": "user", "content": user})
    return extract_code(llm.complete(messages).text, "reward_fn")


def review(llm: LLMClient, code: str, intent: str, spec: MujocoEnvSpec) -> str:
    """The reviewed code: the reviewer's correction, or ``code`` on LGTM or no usable reply."""
    reply = llm.chat(
        prompts.REVIEW_SYSTEM,
        prompts.REVIEW_USER.format(intent=intent, code=code, **env_fields(spec)),
    )
    if "LGTM" in reply.upper() and "```" not in reply:
        return code
    try:
        return extract_code(reply, "reward_fn")
    except ParseError:
        return code


def fix(llm: LLMClient, code: str, error: str, spec: MujocoEnvSpec) -> str:
    """One fixing call; raises ParseError when the reply holds no code."""
    user = prompts.FIX_USER.format(code=code, error=error, **env_fields(spec))
    return extract_code(llm.chat(prompts.FIX_SYSTEM, user), "reward_fn")


def validate_and_fix(
    llm: LLMClient,
    code: str,
    spec: MujocoEnvSpec,
    *,
    max_fix_attempts: int,
    validator: Validator = validate_reward_code,
) -> AuthoredReward:
    """Validate ``code``; on failure ask for fixes up to ``max_fix_attempts`` times."""
    errors: list[str] = []
    for attempt in range(max_fix_attempts + 1):
        result = validator(code, spec.env_id)
        if result.ok:
            return AuthoredReward(code, result, errors, attempt + 1)
        errors.append(f"attempt {attempt + 1} ({result.stage}): {result.message()}")
        logger.info("reward code invalid (%s): %s", result.stage, result.message())
        if attempt == max_fix_attempts:
            break
        try:
            code = fix(llm, code, result.message(), spec)
        except ParseError as exc:
            errors.append(f"fix {attempt + 1}: {exc}")
    return AuthoredReward(None, None, errors, max_fix_attempts + 1)


def author_reward(
    llm: LLMClient,
    intent: str,
    criteria: str,
    spec: MujocoEnvSpec,
    *,
    do_review: bool = True,
    max_fix_attempts: int = 2,
    validator: Validator = validate_reward_code,
    demos: Sequence[RewardDemo] = (),
) -> AuthoredReward:
    """Write (after ``demos``), review and validate a reward for ``intent`` on ``spec``."""
    try:
        code = write_reward(llm, intent, criteria, spec, demos)
    except ParseError as exc:
        logger.info("reward author gave no code: %s", exc)
        code = f"# the author's reply held no code\n# {str(exc)[:200]!r}\n"
    if do_review and "def " in code:
        code = review(llm, code, intent, spec)
    return validate_and_fix(llm, code, spec, max_fix_attempts=max_fix_attempts, validator=validator)


def fallback_reward(spec: MujocoEnvSpec) -> str:
    """The documented fallback: the env's own reward, split into its ``info["reward_*"]`` terms.

    Used (with ``origin="fallback"`` in the reward spec) when no LLM-written reward validates,
    so the loop still trains and judges something; it does not encode the intent.
    """
    keys = [key for key in spec.info_keys if key.startswith("reward_")]
    terms = "\n".join(f"        {k.removeprefix('reward_')}: the env's {k}" for k in keys)
    values = ", ".join(f'"{k.removeprefix("reward_")}": float(info.get("{k}", 0.0))' for k in keys)
    return (
        "def reward_fn(obs, action, next_obs, info):\n"
        '    """Fallback template: the environment\'s own reward terms (not the intent).\n'
        "    LaTeX: r = \\\\sum_k r_k^{env}\n"
        f"    Terms:\n{terms}\n"
        '    """\n'
        f"    terms = {{{values}}}\n"
        "    return float(sum(terms.values())), terms\n"
    )


def reward_templates() -> list[dict[str, str]]:
    """The fallback reward template of every env (:func:`fallback_reward`): what a session
    trains when no authored reward validates, and a starting point for writing one; for the
    IsaacLab tasks a batched starter reward
    (:func:`~langmarl.p2p.reward.isaaclab_specs.reward_template`)."""
    from langmarl.p2p.reward.env_specs import ENV_SPECS
    from langmarl.p2p.reward.isaaclab_specs import isaaclab_reward_templates

    mujoco = [{"env_id": env_id, "name": "env_terms", "code": fallback_reward(spec)}
              for env_id, spec in ENV_SPECS.items()]  # fmt: skip
    return mujoco + isaaclab_reward_templates()
