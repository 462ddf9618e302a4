"""The learner: PPO trained on a reward, in a confined process, and what it leaves on disk.

- :mod:`~langmarl.p2p.learner.train_config`: ``TrainConfig``, one run's settings and presets;
- :mod:`~langmarl.p2p.learner.wrapper`: the Gymnasium wrapper that swaps in the reward;
- :mod:`~langmarl.p2p.learner.sb3_trainer` and :mod:`~langmarl.p2p.learner.ppo_policy`: one
  stable-baselines3 run and its saved policy; :mod:`~langmarl.p2p.learner.vector`: the same on
  a batch of envs (Gymnasium vector or IsaacLab);
- :mod:`~langmarl.p2p.learner.evaluation`: evaluation checkpoints, trajectories and videos;
- :mod:`~langmarl.p2p.learner.executor`: one run per confined process, configs × seeds, and
  their aggregation; :mod:`~langmarl.p2p.learner.fanout`: the same fan-out as jobs;
  :mod:`~langmarl.p2p.learner.train_job`: one run as a ``p2p_train`` job;
- :mod:`~langmarl.p2p.learner.play`: replaying a trained policy.
"""
