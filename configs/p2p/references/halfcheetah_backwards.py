"""A person-written reward for HalfCheetah-v5: run backwards, the reference of the bench
case "make the cheetah run backwards". Try it alone:

    python -m langmarl.p2p.learner.executor \
        --reward-fn configs/p2p/references/halfcheetah_backwards.py \
        --config configs/p2p/train_halfcheetah_tiny.json --runs-dir runs
"""

import numpy as np

from langmarl.p2p import RewardFunction


class RunBackwards(RewardFunction):
    """Reward negative x velocity, penalise large torques."""

    def compute(self, obs, action, next_obs, info):
        backward = -float(info["x_velocity"])
        ctrl = -0.1 * float(np.sum(np.square(action)))
        return backward + ctrl, {"backward": backward, "ctrl": ctrl}

    @property
    def latex(self):
        return r"r = -v_x - 0.1 \|a\|^2"

    @property
    def terms(self):
        return {"backward": "negative x velocity", "ctrl": "control cost"}

    @property
    def description(self):
        return "Run backwards (negative x) with moderate torques."
