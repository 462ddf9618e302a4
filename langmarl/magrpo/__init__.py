"""Weight space: MAGRPO over multi-turn rollout trees, IAC/MAAC actor-critic, external feedback.

Importing this package is cheap; torch and transformers load when a trainer is built.
"""

from typing import TYPE_CHECKING

from langmarl._lazy import lazy_getattr

_NAMES = {
    "MAGRPOConfig": "langmarl.magrpo.config",
    "ActorCriticConfig": "langmarl.magrpo.config",
    "LoRAConfig": "langmarl.magrpo.config",
    "MAGRPOTrainer": "langmarl.magrpo.trainer",
    "IACTrainer": "langmarl.magrpo.actor_critic",
    "MAACTrainer": "langmarl.magrpo.actor_critic",
    "JointSample": "langmarl.magrpo.rollout",
    "JointRewardFunction": "langmarl.magrpo.rollout",
    "ExternalTransition": "langmarl.core.transitions",
    "Branch": "langmarl.core.transitions",
    "transition_from": "langmarl.core.transitions",
    "make_external": "langmarl.magrpo.feedback",
    "get_task": "langmarl.magrpo.tasks",
    "load_causal_lm": "langmarl.magrpo.policy",
    "tictactoe_reward": "langmarl.magrpo.text_envs",
    "tictactoe_transition": "langmarl.magrpo.text_envs",
    "verifier_feedback": "langmarl.magrpo.text_envs",
    "verifier_reward": "langmarl.magrpo.text_envs",
}
__all__ = sorted(_NAMES)
__getattr__ = lazy_getattr(__name__, _NAMES)

if TYPE_CHECKING:
    from langmarl.core.transitions import Branch, ExternalTransition, transition_from
    from langmarl.magrpo.actor_critic import IACTrainer, MAACTrainer
    from langmarl.magrpo.config import ActorCriticConfig, LoRAConfig, MAGRPOConfig
    from langmarl.magrpo.feedback import make_external
    from langmarl.magrpo.policy import load_causal_lm
    from langmarl.magrpo.rollout import JointRewardFunction, JointSample
    from langmarl.magrpo.tasks import get_task
    from langmarl.magrpo.text_envs import (
        tictactoe_reward,
        tictactoe_transition,
        verifier_feedback,
        verifier_reward,
    )
    from langmarl.magrpo.trainer import MAGRPOTrainer
