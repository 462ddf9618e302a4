"""Reward shaping for orchestrator + parallel sub-agents: PARL and critical steps.

Names load lazily, so ``import langmarl.rewards`` does not import torch; the first access to
``PARLReward`` or ``CriticalStepsMetric`` does.
"""

from typing import TYPE_CHECKING

from langmarl._lazy import lazy_getattr

_NAMES = {
    "PARLReward": "langmarl.rewards.parl",
    "anneal_linear": "langmarl.rewards.parl",
    "instantiation_reward": "langmarl.rewards.parl",
    "finish_reward": "langmarl.rewards.parl",
    "task_quality": "langmarl.rewards.parl",
    "parl_total": "langmarl.rewards.parl",
    "CriticalStepsMetric": "langmarl.rewards.critical_steps",
    "critical_steps": "langmarl.rewards.critical_steps",
    "serial_steps": "langmarl.rewards.critical_steps",
    "pad_stages": "langmarl.rewards.critical_steps",
}
__all__ = sorted(_NAMES)
__getattr__ = lazy_getattr(__name__, _NAMES)

if TYPE_CHECKING:
    from langmarl.rewards.critical_steps import (
        CriticalStepsMetric,
        critical_steps,
        pad_stages,
        serial_steps,
    )
    from langmarl.rewards.parl import (
        PARLReward,
        anneal_linear,
        finish_reward,
        instantiation_reward,
        parl_total,
        task_quality,
    )
