"""Reward space: Prompt2Policy on MuJoCo (intent -> reward code -> PPO -> judge -> revise).

Names load lazily, so ``import langmarl.p2p`` does not import gymnasium, MuJoCo or torch.
"""

from typing import TYPE_CHECKING

from langmarl._lazy import lazy_getattr

_NAMES = {
    "RewardFunction": "langmarl.p2p.reward",
    "LegacyReward": "langmarl.p2p.reward",
    "load_reward_source": "langmarl.p2p.reward",
    "load_reward_file": "langmarl.p2p.reward",
    "TrainConfig": "langmarl.p2p.train_config",
    "HP_PRESETS": "langmarl.p2p.train_config",
    "IterationRecord": "langmarl.p2p.records",
    "SessionRecord": "langmarl.p2p.records",
    "ValidationResult": "langmarl.p2p.validation",
    "validate_reward_code": "langmarl.p2p.validation",
    "CustomRewardWrapper": "langmarl.p2p.wrapper",
    "LoopConfig": "langmarl.p2p.loop_config",
    "run_loop": "langmarl.p2p.loop",
    "resume_session": "langmarl.p2p.resume",
    "train_runs": "langmarl.p2p.executor",
    "RewardSpec": "langmarl.p2p.contracts",
    "TrainSummary": "langmarl.p2p.contracts",
    "JudgmentResult": "langmarl.p2p.contracts",
    "LoopResult": "langmarl.p2p.contracts",
    "IterationAggregation": "langmarl.p2p.contracts",
}
__all__ = sorted(_NAMES)
__getattr__ = lazy_getattr(__name__, _NAMES)

if TYPE_CHECKING:
    from langmarl.p2p.contracts import (
        IterationAggregation,
        JudgmentResult,
        LoopResult,
        RewardSpec,
        TrainSummary,
    )
    from langmarl.p2p.executor import train_runs
    from langmarl.p2p.loop import run_loop
    from langmarl.p2p.loop_config import LoopConfig
    from langmarl.p2p.records import IterationRecord, SessionRecord
    from langmarl.p2p.resume import resume_session
    from langmarl.p2p.reward import (
        LegacyReward,
        RewardFunction,
        load_reward_file,
        load_reward_source,
    )
    from langmarl.p2p.train_config import HP_PRESETS, TrainConfig
    from langmarl.p2p.validation import ValidationResult, validate_reward_code
    from langmarl.p2p.wrapper import CustomRewardWrapper
