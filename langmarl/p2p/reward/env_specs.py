"""What the reward author needs to know about each MuJoCo v5 environment.

Observation/action sizes and the ``info`` keys of Gymnasium's MuJoCo v5 environments, so
prompts can describe the env without importing MuJoCo in the loop's process.
"""

from __future__ import annotations

from dataclasses import dataclass

from langmarl.core.errors import ConfigError
from langmarl.core.validation import did_you_mean


@dataclass(frozen=True)
class MujocoEnvSpec:
    """A MuJoCo environment as the reward author sees it.

    Attributes:
        env_id: Gymnasium id.
        obs_dim: Size of ``obs``/``next_obs``.
        act_dim: Size of ``action``.
        info_keys: Keys of ``info`` after a step.
        description: One paragraph: the body, what obs holds, what the default reward does.
    """

    env_id: str
    obs_dim: int
    act_dim: int
    info_keys: tuple[str, ...]
    description: str


_LOCOMOTION = "obs excludes the x (and y) position of the torso unless info has it."
_HOPPING_KEYS = (
    "x_position", "z_distance_from_origin", "x_velocity", "reward_forward", "reward_ctrl",
    "reward_survive",
)  # fmt: skip
"""``info`` of the 2D bodies that can fall (Hopper, Walker2d)."""
_PLANAR_KEYS = (
    "x_position", "y_position", "distance_from_origin", "x_velocity", "y_velocity",
    "reward_forward", "reward_ctrl",
)  # fmt: skip
"""``info`` of the bodies that move in the x-y plane (Ant adds its contact and survive
terms; Swimmer has just these)."""

ENV_SPECS: dict[str, MujocoEnvSpec] = {
    spec.env_id: spec
    for spec in [
        MujocoEnvSpec(
            "HalfCheetah-v5",
            17,
            6,
            ("x_position", "x_velocity", "reward_forward", "reward_ctrl"),
            "2D cheetah (9 links). obs[0]=torso z, obs[1]=torso angle, obs[2:8]=joint angles, "
            "obs[8]=x velocity, obs[9]=z velocity, obs[10]=angular velocity, obs[11:17]=joint "
            "velocities. Positive x_velocity is forward. " + _LOCOMOTION,
        ),
        MujocoEnvSpec(
            "Hopper-v5",
            11,
            3,
            _HOPPING_KEYS,
            "2D one-legged hopper. obs[0]=torso z (height), obs[1]=torso angle, obs[2:5]=joint "
            "angles, obs[5]=x velocity, obs[6]=z velocity. Episode ends when it falls. "
            + _LOCOMOTION,
        ),
        MujocoEnvSpec(
            "Walker2d-v5",
            17,
            6,
            _HOPPING_KEYS,
            "2D biped. obs[0]=torso z, obs[1]=torso angle, obs[2:8]=joint angles, obs[8]=x "
            "velocity, obs[9]=z velocity. Episode ends when it falls. " + _LOCOMOTION,
        ),
        MujocoEnvSpec(
            "Ant-v5",
            105,
            8,
            (*_PLANAR_KEYS, "reward_contact", "reward_survive"),
            "3D four-legged ant. obs[0]=torso z, obs[1:5]=torso orientation quaternion, "
            "obs[13:16]=torso linear velocity. " + _LOCOMOTION,
        ),
        MujocoEnvSpec(
            "Humanoid-v5",
            348,
            17,
            (
                "x_position",
                "y_position",
                "tendon_length",
                "tendon_velocity",
                "distance_from_origin",
                "x_velocity",
                "y_velocity",
                "reward_survive",
                "reward_forward",
                "reward_ctrl",
                "reward_contact",
            ),
            "3D humanoid. obs[0]=torso z, obs[1:5]=torso orientation quaternion. Episode ends "
            "when the torso z leaves [1.0, 2.0]. " + _LOCOMOTION,
        ),
        MujocoEnvSpec(
            "Swimmer-v5",
            8,
            2,
            _PLANAR_KEYS,
            "3-link swimmer in viscous fluid. obs[0]=front tip angle, obs[1:3]=joint angles, "
            "obs[3:5]=tip x/y velocity.",
        ),
        MujocoEnvSpec(
            "Reacher-v5",
            10,
            2,
            ("reward_dist", "reward_ctrl"),
            "2-joint arm reaching a target. obs[0:2]=cos of joint angles, obs[2:4]=sin, "
            "obs[4:6]=target x/y, obs[6:8]=joint velocities, obs[8:10]=fingertip minus target.",
        ),
        MujocoEnvSpec(
            "InvertedPendulum-v5",
            4,
            1,
            ("reward_survive",),
            "Cart-pole. obs[0]=cart position, obs[1]=pole angle, obs[2]=cart velocity, "
            "obs[3]=pole angular velocity. Episode ends when |pole angle| > 0.2.",
        ),
    ]
}


def get_env_spec(env_id: str) -> MujocoEnvSpec:
    """The spec of ``env_id``.

    Raises:
        ConfigError: Unknown id, with the closest known one.
    """
    if env_id not in ENV_SPECS:
        raise ConfigError(
            f"env_id {env_id!r} is not a supported MuJoCo env{did_you_mean(env_id, ENV_SPECS)}; "
            f"choose one of {sorted(ENV_SPECS)}"
        )
    return ENV_SPECS[env_id]


def env_catalog() -> list[dict[str, object]]:
    """Every env a reward can be written for and what the reward can read in it: its
    ``simulator`` ("mujoco", or "isaaclab" for the tasks of
    :mod:`langmarl.p2p.reward.isaaclab_specs`), the sizes of ``obs`` and ``action``, the keys of
    ``info``, the description the author sees."""
    from langmarl.p2p.reward.isaaclab_specs import isaaclab_catalog

    mujoco: list[dict[str, object]] = [
        {"env_id": s.env_id, "simulator": "mujoco", "obs_dim": s.obs_dim, "act_dim": s.act_dim,
         "info_keys": list(s.info_keys), "description": s.description}
        for s in ENV_SPECS.values()
    ]  # fmt: skip
    return mujoco + isaaclab_catalog()
