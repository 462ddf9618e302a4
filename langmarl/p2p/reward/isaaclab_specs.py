"""What the reward author needs to know about each IsaacLab task, beside the MuJoCo specs.

IsaacLab's direct-workflow tasks return ``{"policy": obs}`` batches of shape
``(num_envs, obs_dim)``; the layouts below are those of IsaacLab 2.x's ``CartpoleEnv`` and
``LocomotionEnv`` (Ant, Humanoid). Their step ``extras`` hold no per-env quantities, so
``info`` holds only what :data:`IsaacLabEnvSpec.info_sources` reads from the task's own
attributes. Nothing here imports IsaacLab: the catalog (``GET /api/envs``) and
:class:`~langmarl.p2p.learner.train_config.TrainConfig`'s checks read these records on any machine.

Every spec carries a starter reward (:func:`reward_template`) written for batches
(``batched = True``, see :mod:`langmarl.p2p.learner.vector.batch_reward`), with only operators and
tensor methods, so it reads the same for numpy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from langmarl.core.errors import ConfigError
from langmarl.core.validation import did_you_mean

Simulator = Literal["mujoco", "gym_vector", "isaaclab"]
"""Where a training run's environments step (``TrainConfig.simulator``)."""
ISAACLAB_PREFIX = "Isaac-"


@dataclass(frozen=True)
class IsaacLabEnvSpec:
    """An IsaacLab task as the reward author sees it.

    Attributes:
        env_id: Gymnasium id registered by ``isaaclab_tasks``.
        obs_dim: Width of ``obs``/``next_obs`` (one row per env).
        act_dim: Width of ``action``; actions are clipped to [-1, 1] and scaled by the task.
        info_keys: Keys of ``info`` (each a ``(num_envs,)`` tensor).
        description: One paragraph: the body, what each obs column holds, when episodes end.
        episode_steps: Policy steps of a full episode (the task's ``episode_length_s``).
        info_sources: ``info`` key -> (task attribute, column) it is read from after a step.
        template_terms: The starter reward's terms: (name, expression, description).
        preset: TrainConfig overrides for this task (``TrainConfig.for_env``).
    """

    env_id: str
    obs_dim: int
    act_dim: int
    info_keys: tuple[str, ...]
    description: str
    episode_steps: int
    info_sources: dict[str, tuple[str, int]] = field(default_factory=dict)
    template_terms: tuple[tuple[str, str, str], ...] = ()
    preset: dict[str, Any] = field(default_factory=dict)

    simulator: Simulator = "isaaclab"


def _locomotion(body: str, joints: int, height: float, vel_scale: float, ang: float) -> str:
    end = 12 + joints
    return (
        f"{body}, {joints} actuated joints, walking towards +x. obs[:,0]=torso height, "
        "obs[:,1:4]=torso linear velocity in the torso's heading frame (obs[:,1] is forward), "
        f"obs[:,4:7]=angular velocity (x{ang}), obs[:,7]=yaw, obs[:,8]=roll, obs[:,9]=angle "
        "to the target far along +x, obs[:,10]=up projection (1 = upright), obs[:,11]=heading "
        f"projection (1 = facing +x), obs[:,12:{end}]=joint positions scaled to [-1, 1] of "
        f"their limits, obs[:,{end}:{end + joints}]=joint velocities (x{vel_scale}), "
        f"obs[:,{end + joints}:]=the previous actions. info x_velocity/y_velocity: world-frame "
        f"torso velocity. Episode ends when the torso height drops below {height}."
    )


_LOCOMOTION_INFO = {"x_velocity": ("velocity", 0), "y_velocity": ("velocity", 1)}
_LOCOMOTION_TERMS = (
    ("forward", "next_obs[:, 1]", "forward velocity of the torso"),
    ("upright", "0.1 * next_obs[:, 10]", "up projection of the torso"),
    ("ctrl", "-0.005 * (action ** 2).sum(-1)", "action cost"),
)
_GPU_PRESET = {"simulator": "isaaclab", "num_envs": 1024, "num_steps": 16, "batch_size": 4096}

ISAACLAB_SPECS: dict[str, IsaacLabEnvSpec] = {
    spec.env_id: spec
    for spec in [
        IsaacLabEnvSpec(
            "Isaac-Cartpole-Direct-v0",
            4,
            1,
            (),
            "Cart-pole on a rail. obs[:,0]=pole angle (0 = upright), obs[:,1]=pole angular "
            "velocity, obs[:,2]=cart position, obs[:,3]=cart velocity; action[:,0] pushes the "
            "cart (x100 N). Episode ends when |cart position| > 3 m or |pole angle| > pi/2.",
            episode_steps=300,
            template_terms=(
                ("upright", "1.0 - next_obs[:, 0] ** 2", "one minus the squared pole angle"),
                ("centred", "-0.1 * abs(next_obs[:, 2])", "distance of the cart from the middle"),
            ),
            preset={**_GPU_PRESET, "n_epochs": 20, "ent_coef": 0.01, "net_arch": [32, 32]},
        ),
        IsaacLabEnvSpec(
            "Isaac-Ant-Direct-v0",
            36,
            8,
            tuple(_LOCOMOTION_INFO),
            _locomotion("3D four-legged ant", 8, 0.31, 0.2, 1.0),
            episode_steps=900,
            info_sources=_LOCOMOTION_INFO,
            template_terms=_LOCOMOTION_TERMS,
            preset={**_GPU_PRESET, "n_epochs": 10},
        ),
        IsaacLabEnvSpec(
            "Isaac-Humanoid-Direct-v0",
            75,
            21,
            tuple(_LOCOMOTION_INFO),
            _locomotion("3D humanoid", 21, 0.8, 0.1, 0.25),
            episode_steps=900,
            info_sources=_LOCOMOTION_INFO,
            template_terms=_LOCOMOTION_TERMS,
            preset={**_GPU_PRESET, "n_epochs": 10, "net_arch": [256, 256]},
        ),
    ]
}


def get_isaaclab_spec(env_id: str) -> IsaacLabEnvSpec:
    """The spec of ``env_id``.

    Raises:
        ConfigError: Unknown id, with the closest known one.
    """
    if env_id not in ISAACLAB_SPECS:
        raise ConfigError(
            f"env_id {env_id!r} is not a supported IsaacLab task"
            f"{did_you_mean(env_id, ISAACLAB_SPECS)}; choose one of {sorted(ISAACLAB_SPECS)}"
        )
    return ISAACLAB_SPECS[env_id]


def simulator_problem(env_id: str, simulator: Simulator) -> str | None:
    """Why ``env_id`` cannot run on ``simulator`` (and what to set instead), or None."""
    isaac = env_id.startswith(ISAACLAB_PREFIX)
    if simulator == "isaaclab" and env_id not in ISAACLAB_SPECS:
        return (
            f"simulator='isaaclab' runs IsaacLab tasks, not env_id={env_id!r}: set env_id to "
            f"one of {sorted(ISAACLAB_SPECS)} (or simulator='mujoco' or 'gym_vector' for a "
            f"MuJoCo env).{did_you_mean(env_id, ISAACLAB_SPECS)}"
        )
    if simulator != "isaaclab" and isaac:
        return f"env_id={env_id!r} is an IsaacLab task: set simulator='isaaclab'"
    return None


def reward_template(spec: IsaacLabEnvSpec) -> str:
    """A starter reward for ``spec``, written for batches (``batched = True``)."""
    names = [name for name, _, _ in spec.template_terms]
    body = "".join(
        f"        {name} = {expression}\n" for name, expression, _ in spec.template_terms
    )
    terms = ", ".join(f'"{name}": {name}' for name in names)
    latex = " + ".join(f"r_{{{name}}}" for name in names)
    described = "".join(f'            "{n}": "{d}",\n' for n, _, d in spec.template_terms)
    return (
        "class Starter(RewardFunction):\n"
        f'    """Starter reward for {spec.env_id}: a batch of envs per call, one row each."""\n\n'
        "    batched = True\n\n"
        "    def compute(self, obs, action, next_obs, info):\n"
        f"{body}        return {' + '.join(names)}, {{{terms}}}\n\n"
        "    @property\n"
        "    def latex(self):\n"
        f'        return r"r = {latex}"\n\n'
        "    @property\n"
        "    def terms(self):\n"
        f"        return {{\n{described}        }}\n"
    )


def isaaclab_reward_templates() -> list[dict[str, str]]:
    """The starter reward of every IsaacLab task (``GET /api/reward-templates``)."""
    return [
        {"env_id": env_id, "name": "starter_batched", "code": reward_template(spec)}
        for env_id, spec in ISAACLAB_SPECS.items()
    ]


def isaaclab_catalog() -> list[dict[str, object]]:
    """The IsaacLab entries of the env catalog
    (:func:`~langmarl.p2p.reward.env_specs.env_catalog`)."""
    return [
        {"env_id": s.env_id, "simulator": s.simulator, "obs_dim": s.obs_dim,
         "act_dim": s.act_dim, "info_keys": list(s.info_keys), "description": s.description}
        for s in ISAACLAB_SPECS.values()
    ]  # fmt: skip


ISAACLAB_PRESETS: dict[str, dict[str, Any]] = {
    env_id: spec.preset for env_id, spec in ISAACLAB_SPECS.items()
}
"""Per-task TrainConfig overrides (joined into ``HP_PRESETS``)."""
