"""Reward space: Prompt2Policy on MuJoCo (intent -> reward code -> PPO -> judge -> revise).

One subpackage per part of the story: :mod:`~langmarl.p2p.reward` (the reward contract and its
checks), :mod:`~langmarl.p2p.learner` (PPO on a reward), :mod:`~langmarl.p2p.agents` (the LLM
author, judges and reviser), :mod:`~langmarl.p2p.design` (reward design a small model can
drive), :mod:`~langmarl.p2p.session` (the loop and its records), :mod:`~langmarl.p2p.analysis`
and :mod:`~langmarl.p2p.bench`. Each imports only the parts listed before it, except that the
records and contracts of :mod:`~langmarl.p2p.session` are shared by all.

Names load lazily, so ``import langmarl.p2p`` does not import gymnasium, MuJoCo or torch.
"""

from typing import TYPE_CHECKING

from langmarl._lazy import lazy_getattr

_NAMES = {
    "RewardFunction": "langmarl.p2p.reward.function",
    "LegacyReward": "langmarl.p2p.reward.function",
    "load_reward_source": "langmarl.p2p.reward.function",
    "load_reward_file": "langmarl.p2p.reward.function",
    "TrainConfig": "langmarl.p2p.learner.train_config",
    "HP_PRESETS": "langmarl.p2p.learner.train_config",
    "IterationRecord": "langmarl.p2p.session.records",
    "SessionRecord": "langmarl.p2p.session.records",
    "ValidationResult": "langmarl.p2p.reward.validation",
    "validate_reward_code": "langmarl.p2p.reward.validation",
    "CustomRewardWrapper": "langmarl.p2p.learner.wrapper",
    "LoopConfig": "langmarl.p2p.session.config",
    "run_loop": "langmarl.p2p.session.loop",
    "resume_session": "langmarl.p2p.session.resume",
    "train_runs": "langmarl.p2p.learner.executor",
    "RewardSpec": "langmarl.p2p.session.contracts",
    "TrainSummary": "langmarl.p2p.session.contracts",
    "JudgmentResult": "langmarl.p2p.session.contracts",
    "LoopResult": "langmarl.p2p.session.contracts",
    "IterationAggregation": "langmarl.p2p.session.contracts",
}
__all__ = sorted(_NAMES)
__getattr__ = lazy_getattr(__name__, _NAMES)

if TYPE_CHECKING:
    from langmarl.p2p.learner.executor import train_runs
    from langmarl.p2p.learner.train_config import HP_PRESETS, TrainConfig
    from langmarl.p2p.learner.wrapper import CustomRewardWrapper
    from langmarl.p2p.reward.function import (
        LegacyReward,
        RewardFunction,
        load_reward_file,
        load_reward_source,
    )
    from langmarl.p2p.reward.validation import ValidationResult, validate_reward_code
    from langmarl.p2p.session.config import LoopConfig
    from langmarl.p2p.session.contracts import (
        IterationAggregation,
        JudgmentResult,
        LoopResult,
        RewardSpec,
        TrainSummary,
    )
    from langmarl.p2p.session.loop import run_loop
    from langmarl.p2p.session.records import IterationRecord, SessionRecord
    from langmarl.p2p.session.resume import resume_session
