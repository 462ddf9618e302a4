"""Core: errors, crash-safe files, validation, typed records and the small ABCs."""

from typing import TYPE_CHECKING

from langmarl._lazy import lazy_getattr

_NAMES = {
    "AgentId": "langmarl.core.records",
    "Evaluation": "langmarl.core.records",
    "Gradient": "langmarl.core.records",
    "Policies": "langmarl.core.records",
    "PolicyUpdate": "langmarl.core.records",
    "Step": "langmarl.core.records",
    "Trajectory": "langmarl.core.records",
    "BaseAgent": "langmarl.core.base",
    "BaseCritic": "langmarl.core.base",
    "BaseEnvironment": "langmarl.core.base",
    "BaseOptimizer": "langmarl.core.base",
    "BaseReward": "langmarl.core.base",
    "LLMAgent": "langmarl.core.base",
}
__all__ = sorted(_NAMES)
__getattr__ = lazy_getattr(__name__, _NAMES)

if TYPE_CHECKING:
    from langmarl.core.base import (
        BaseAgent,
        BaseCritic,
        BaseEnvironment,
        BaseOptimizer,
        BaseReward,
        LLMAgent,
    )
    from langmarl.core.records import (
        AgentId,
        Evaluation,
        Gradient,
        Policies,
        PolicyUpdate,
        Step,
        Trajectory,
    )
