"""The reward: what a reward function is, what it may read, and how it is checked.

- :mod:`~langmarl.p2p.reward.function`: the contract (``RewardFunction`` and the legacy
  ``reward_fn`` form) and loading it from source or a file;
- :mod:`~langmarl.p2p.reward.env_specs`: per MuJoCo env, what ``obs``/``action``/``info``
  hold for a reward author (:mod:`~langmarl.p2p.reward.isaaclab_specs`: the same per IsaacLab
  task, with its starter rewards and PPO presets);
- :mod:`~langmarl.p2p.reward.validation` (and ``_harness``, which runs in the sandbox): the
  static and runtime checks a reward passes before anything trains on it.

It knows nothing of training, agents or sessions. ``from langmarl.p2p.reward import
RewardFunction`` (the module's path before issue 40, in saved reward files) still works: the
contract's names load lazily from here.
"""

from langmarl._lazy import lazy_getattr

_NAMES = {
    name: "langmarl.p2p.reward.function"
    for name in ("RewardFunction", "LegacyReward", "load_reward_source", "load_reward_file")
}
__all__ = sorted(_NAMES)
__getattr__ = lazy_getattr(__name__, _NAMES)
