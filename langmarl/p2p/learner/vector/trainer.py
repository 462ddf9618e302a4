"""One PPO run on the vector path (``TrainConfig.simulator`` ``gym_vector`` or ``isaaclab``).

Runs inside the executor's confined process (:mod:`langmarl.p2p.learner.executor` picks it by
``config.simulator``), the only place the reward source is loaded, exactly as
:func:`~langmarl.p2p.learner.sb3_trainer.run_training` does on the MuJoCo path. It differs only in
how the envs are built and evaluated; the PPO run, its scalars, checkpoints, saved policy and
summary are :func:`~langmarl.p2p.learner.sb3_trainer.train_ppo`'s::

    reward  = load_reward_source(source)                # in the confined process only
    backend = make_backend(config)                      # gym_vector | isaaclab
    venv    = VecNormalize(RewardVecEnv(VectorRewardWrapper(backend, reward)))
    train_ppo(record, config, reward, venv, evaluate=evaluate_vector_checkpoint)

PPO runs on the CPU (:func:`~langmarl.p2p.learner.ppo_policy.build_ppo`); with IsaacLab the envs and
a batched reward stay on the GPU and observations cross to the CPU once per step. IsaacLab
holds one simulation per process, so evaluation runs on the training envs (resetting them);
evaluating mid-training would pull the envs from under PPO's rollout, so there only the final
checkpoint runs.
"""

from __future__ import annotations

import functools
import logging

from langmarl.p2p.learner.train_config import TrainConfig
from langmarl.p2p.learner.vector.backend import make_backend
from langmarl.p2p.learner.vector.evaluator import evaluate_vector_checkpoint
from langmarl.p2p.learner.vector.wrapper import VectorRewardWrapper
from langmarl.p2p.reward.function import load_reward_source
from langmarl.p2p.session.contracts import TrainSummary
from langmarl.p2p.session.iteration_record import IterationRecord

logger = logging.getLogger(__name__)


def run_vector_training(
    record: IterationRecord, reward_source: str, config: TrainConfig
) -> TrainSummary:
    """Train PPO on ``reward_source`` over ``config.num_envs`` batched envs; write the run
    contract (no videos: the vector backends do not render).

    Args:
        record: The run directory to write into.
        reward_source: Validated reward source code.
        config: The run's hyperparameters; ``config.simulator`` picks the backend.
    """
    import torch
    from stable_baselines3.common.vec_env import VecNormalize

    from langmarl.p2p.learner.sb3_trainer import train_ppo
    from langmarl.p2p.learner.vector.sb3_adapter import RewardVecEnv

    torch.set_num_threads(config.torch_threads)
    reward = load_reward_source(reward_source)
    backend = make_backend(config)
    venv = VecNormalize(
        RewardVecEnv(VectorRewardWrapper(backend, reward)),
        norm_obs=config.normalize_obs,
        norm_reward=config.normalize_reward,
        gamma=config.gamma,
    )
    shared = backend if backend.exclusive else None
    if shared is not None and config.num_evals > 1:
        logger.warning(
            "simulator=%r evaluates on the training envs: only the final checkpoint runs "
            "(num_evals=%d ignored)",
            config.simulator,
            config.num_evals,
        )
        config = config.model_copy(update={"num_evals": 1})
    evaluate = functools.partial(evaluate_vector_checkpoint, backend=shared)
    return train_ppo(record, config, reward, venv, evaluate)
