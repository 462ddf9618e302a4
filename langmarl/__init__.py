"""langmarl: reinforcement learning for teams of LLM agents.

Importing this package is cheap: every public name below loads on first access.
"""

from typing import TYPE_CHECKING

from langmarl._lazy import lazy_getattr
from langmarl.core.version import __version__

# Public name -> module that defines it. Add new public names here (and under TYPE_CHECKING).
_NAMES = {
    # configuration
    "BaseConfig": "langmarl.config.base",
    "LanguageTaskConfig": "langmarl.config.envs",
    "OvercookedConfig": "langmarl.config.envs",
    "PistonballConfig": "langmarl.config.envs",
    "PosterConfig": "langmarl.config.envs",
    "TicTacToeConfig": "langmarl.config.envs",
    "load_config": "langmarl.config.loading",
    # LLM layer
    "LLMClient": "langmarl.llm.client",
    "LLMConfig": "langmarl.llm.config",
    "TokenTracker": "langmarl.llm.tracker",
    "UsageLedger": "langmarl.llm.tracker",
    "get_llm_config": "langmarl.llm.presets",
    "list_available_models": "langmarl.llm.presets",
    # environments
    "make_env": "langmarl.envs.registry",
    "register_env": "langmarl.envs.registry",
    "list_envs": "langmarl.envs.registry",
    # language space (issue 3)
    "train": "langmarl.api",
    "build_trainer": "langmarl.api",
    "Trajectory": "langmarl.core.records",
    "Step": "langmarl.core.records",
    "Evaluation": "langmarl.core.records",
    "BaseEnvironment": "langmarl.core.base",
    "BaseAgent": "langmarl.core.base",
    "BaseCritic": "langmarl.core.base",
    "BaseReward": "langmarl.core.base",
    "BaseOptimizer": "langmarl.core.base",
    "LLMAgent": "langmarl.core.base",
    "CentralizedCritic": "langmarl.textgrad.critic",
    "PolicyGradientOptimizer": "langmarl.textgrad.optimizer",
    "TrajectoryFormatter": "langmarl.textgrad.formatter",
    "MonteCarloTrainer": "langmarl.trainer.monte_carlo",
    "Callback": "langmarl.trainer.callbacks",
    "LoggingCallback": "langmarl.trainer.callbacks",
    "CheckpointCallback": "langmarl.trainer.callbacks",
    "EarlyStoppingCallback": "langmarl.trainer.callbacks",
    "LocalStore": "langmarl.store.local",
    "PolicyCheckpoint": "langmarl.store.checkpoint",
    "TrajectoryStore": "langmarl.store.trajectories",
    "RunLogger": "langmarl.store.logger",
    # reward space (Prompt2Policy)
    "RewardFunction": "langmarl.p2p.reward.function",
    "IterationRecord": "langmarl.p2p.session.records",
    "SessionRecord": "langmarl.p2p.session.records",
    # PARL (issue 7)
    "PARLReward": "langmarl.rewards.parl",
    "CriticalStepsMetric": "langmarl.rewards.critical_steps",
    "ParallelTasksEnv": "langmarl.envs.parallel.env",
    "ParallelTasksConfig": "langmarl.parl.config",
    "OrchestratorGRPO": "langmarl.parl.grpo",
    "OrchestratorGRPOConfig": "langmarl.parl.grpo",
    # weight space
    "MAGRPOConfig": "langmarl.magrpo.config",
    "MAGRPOTrainer": "langmarl.magrpo.trainer",
    "IACTrainer": "langmarl.magrpo.actor_critic",
    "MAACTrainer": "langmarl.magrpo.actor_critic",
    # errors
    "LangmarlError": "langmarl.core.errors",
    "ConfigError": "langmarl.core.errors",
    "LLMError": "langmarl.core.errors",
}
__all__ = sorted(_NAMES)
__getattr__ = lazy_getattr(__name__, _NAMES)

if TYPE_CHECKING:
    from langmarl.api import build_trainer, train
    from langmarl.config.base import BaseConfig
    from langmarl.config.envs import (
        LanguageTaskConfig,
        OvercookedConfig,
        PistonballConfig,
        PosterConfig,
        TicTacToeConfig,
    )
    from langmarl.config.loading import load_config
    from langmarl.core.base import (
        BaseAgent,
        BaseCritic,
        BaseEnvironment,
        BaseOptimizer,
        BaseReward,
        LLMAgent,
    )
    from langmarl.core.errors import ConfigError, LangmarlError, LLMError
    from langmarl.core.records import Evaluation, Step, Trajectory
    from langmarl.envs.parallel.env import ParallelTasksEnv
    from langmarl.envs.registry import list_envs, make_env, register_env
    from langmarl.llm.client import LLMClient
    from langmarl.llm.config import LLMConfig
    from langmarl.llm.presets import get_llm_config, list_available_models
    from langmarl.llm.tracker import TokenTracker, UsageLedger
    from langmarl.magrpo.actor_critic import IACTrainer, MAACTrainer
    from langmarl.magrpo.config import MAGRPOConfig
    from langmarl.magrpo.trainer import MAGRPOTrainer
    from langmarl.p2p.reward.function import RewardFunction
    from langmarl.p2p.session.records import IterationRecord, SessionRecord
    from langmarl.parl.config import ParallelTasksConfig
    from langmarl.parl.grpo import OrchestratorGRPO, OrchestratorGRPOConfig
    from langmarl.rewards.critical_steps import CriticalStepsMetric
    from langmarl.rewards.parl import PARLReward
    from langmarl.store.checkpoint import PolicyCheckpoint
    from langmarl.store.local import LocalStore
    from langmarl.store.logger import RunLogger
    from langmarl.store.trajectories import TrajectoryStore
    from langmarl.textgrad.critic import CentralizedCritic
    from langmarl.textgrad.formatter import TrajectoryFormatter
    from langmarl.textgrad.optimizer import PolicyGradientOptimizer
    from langmarl.trainer.callbacks import (
        Callback,
        CheckpointCallback,
        EarlyStoppingCallback,
        LoggingCallback,
    )
    from langmarl.trainer.monte_carlo import MonteCarloTrainer
