"""The reward space's vector path: one reward applied to a batch of environments at once.

The MuJoCo path (:mod:`~langmarl.p2p.learner.wrapper`, :mod:`~langmarl.p2p.learner.sb3_trainer`)
steps one Gymnasium env per process. This subpackage steps ``num_envs`` envs as one batch of torch
tensors, so the same loop can drive a GPU simulator:

- :mod:`~langmarl.p2p.reward.isaaclab_specs`: the IsaacLab tasks a reward can be written for (what
  ``obs``/``action``/``info`` hold), beside the MuJoCo specs;
- :mod:`~langmarl.p2p.learner.vector.backend`: the batched-env protocol and the simulator table
  (``gym_vector``: Gymnasium's ``SyncVectorEnv`` over MuJoCo on the CPU; ``isaaclab``);
- :mod:`~langmarl.p2p.learner.vector.batch_reward`: the reward contract over a batch;
- :mod:`~langmarl.p2p.learner.vector.wrapper`: the reward wrapper (per-env reward and terms);
- :mod:`~langmarl.p2p.learner.vector.sb3_adapter`: the batch as an SB3 ``VecEnv``;
- :mod:`~langmarl.p2p.learner.vector.evaluator`: evaluation checkpoints over the batch;
- :mod:`~langmarl.p2p.learner.vector.trainer`: one PPO run, chosen by ``TrainConfig.simulator``.

Importing it loads nothing heavy: torch, Gymnasium, SB3 and IsaacLab load inside the modules
that need them. Reward code runs only in the executor's confined process, as on the MuJoCo path.
"""
