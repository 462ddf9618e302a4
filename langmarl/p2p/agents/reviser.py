"""The reviser: rewrite the reward (and, within bounds, PPO hyperparameters) after a judgment."""

from __future__ import annotations

import json
import logging
import math
from typing import TYPE_CHECKING, Any

from langmarl.core.errors import ParseError
from langmarl.extractors import python_blocks
from langmarl.llm.tools import ToolPrompts, converse
from langmarl.p2p.agents import prompts
from langmarl.p2p.agents.author import env_fields
from langmarl.p2p.agents.lookback import Lookback
from langmarl.p2p.agents.parsing import extract_code, extract_json
from langmarl.p2p.learner.train_config import HP_BOUNDS, TrainConfig
from langmarl.p2p.reward.env_specs import MujocoEnvSpec
from langmarl.p2p.session.contracts import JudgmentResult, ReviseResult

if TYPE_CHECKING:
    from langmarl.llm.client import LLMClient

logger = logging.getLogger(__name__)
INTEGER_HPS = frozenset({"n_epochs"})


def clamp_hp_changes(
    changes: dict[str, Any], bounds: dict[str, tuple[float, float]] = HP_BOUNDS
) -> tuple[dict[str, float], dict[str, str]]:
    """Keep whitelisted numeric changes, clamped into their bounds.

    Returns:
        ``(applied, rejected)``: name -> clamped value, and name -> why it was dropped.
    """
    applied: dict[str, float] = {}
    rejected: dict[str, str] = {}
    for name, raw in changes.items():
        if name not in bounds:
            rejected[name] = f"not tunable (allowed: {sorted(bounds)})"
            continue
        try:
            value = float(raw)
        except (TypeError, ValueError):
            rejected[name] = f"not a number: {raw!r}"
            continue
        if not math.isfinite(value):
            rejected[name] = f"not finite: {raw!r}"
            continue
        low, high = bounds[name]
        clamped = min(high, max(low, value))
        applied[name] = float(round(clamped)) if name in INTEGER_HPS else clamped
    return applied, rejected


def apply_hp_changes(config: TrainConfig, applied: dict[str, float]) -> TrainConfig:
    """``config`` with ``applied`` changes (integers where the field is an integer)."""
    update = {k: int(v) if k in INTEGER_HPS else v for k, v in applied.items()}
    return TrainConfig.from_dict({**config.model_dump(), **update})


def revise(
    llm: LLMClient,
    *,
    intent: str,
    code: str,
    judgment: JudgmentResult,
    term_means: dict[str, float],
    measurements: str,
    config: TrainConfig,
    spec: MujocoEnvSpec,
    hp_tuning: bool = True,
    lookback: Lookback | None = None,
    tool_rounds: int = 0,
) -> ReviseResult:
    """Ask for a revised reward (and hyperparameter changes when ``hp_tuning``).

    With a ``lookback`` and ``tool_rounds`` > 0 the model may first call the look-back
    tools for up to ``tool_rounds`` rounds (:func:`langmarl.llm.tools.converse`; a reply with
    a code block is final); the final reply is parsed as a single reply is, and the calls are
    recorded in the result.
    """
    hparams = {k: getattr(config, k) for k in HP_BOUNDS}
    system = prompts.REVISE_SYSTEM.format(hp_keys=", ".join(HP_BOUNDS) if hp_tuning else "none")
    user = prompts.REVISE_USER.format(
        intent=intent, code=code, score=judgment.intent_score,
        diagnosis=judgment.diagnosis[:600] or "no diagnosis",
        term_means=json.dumps({k: round(v, 4) for k, v in term_means.items()}),
        measurements=measurements.replace("\n", "; "),
        warnings="; ".join(judgment.warnings) or "none", hparams=json.dumps(hparams),
        **env_fields(spec),
    )  # fmt: skip
    tool_prompts = _tool_prompts(lookback)
    transcript = converse(llm, system, user, lookback, tool_rounds, tool_prompts, final=has_code)
    reply = transcript.reply
    result = ReviseResult(tool_calls=transcript.calls, tool_protocol=transcript.protocol)
    try:
        result.reward_code = extract_code(reply, "reward_fn")
    except ParseError as exc:
        result.notes = f"no revised code: {str(exc)[:200]}"
    if hp_tuning:
        result.hp_changes, result.rejected = clamp_hp_changes(extract_json(reply))
    return result


def has_code(reply: str) -> bool:
    """Whether ``reply`` holds a code block (closed or not): the revision, so it is final."""
    return bool(python_blocks(reply, unclosed=True))


def _tool_prompts(lookback: Lookback | None) -> ToolPrompts:
    """What the model is told about the look-back tools (iterations ``1..current``)."""
    current = lookback.current if lookback is not None else 0
    tools = lookback.describe() if lookback is not None else ""
    return ToolPrompts(
        functions=prompts.REVISE_TOOLS_FUNCTIONS.format(current=current),
        text=prompts.REVISE_TOOLS_TEXT.format(current=current, tools=tools),
        done=prompts.REVISE_TOOLS_DONE,
        images=prompts.REVISE_FRAMES,
    )
