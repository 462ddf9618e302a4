"""The term catalog: per environment, the named quantities a reward can use and how each is
read from ``obs``, ``action``, ``next_obs`` and ``info`` (issue 38, after Text2Reward's
compact, typed abstraction of the environment): a model composes a reward from them rather
than inventing field names. ``tests/p2p/test_catalog.py`` checks every entry against the env
specs (``info`` keys, observation sizes) and reads each one in the real environment.

Each environment also has its **objectives**: what a reward for it can ask of the body
(move forward, move backwards, stay still, keep the pole up …), each a proposal over the
catalog (:mod:`~langmarl.p2p.design.proposals`) with the phrase a small model's likelihood
ranks it by ("So the robot should *move backwards.*"), plus the shaping every objective of
that body gets (a control cost; staying healthy for bodies that can fall).
"""

from __future__ import annotations

from dataclasses import dataclass

from langmarl.core.errors import ConfigError
from langmarl.p2p.design.proposals import Component, Proposal, Quantity, compile_proposal

CONTROL = Quantity("control", "float(np.sum(np.square(action)))", "squared action (effort)")
ALIVE = Quantity("alive", "1.0", "1 at every step the episode goes on")
X_VELOCITY = Quantity("x_velocity", 'float(info["x_velocity"])', "velocity along +x (m/s)")
Y_VELOCITY = Quantity("y_velocity", 'float(info["y_velocity"])', "velocity along +y (m/s)")
HEALTHY = Quantity("healthy", 'float(info["reward_survive"])', "the env's reward for staying up")
DISTANCE = Quantity(
    "distance_from_origin", 'float(info["distance_from_origin"])', "distance from the start (m)"
)
TORSO_HEIGHT = Quantity("torso_height", "float(next_obs[0])", "height of the torso (m)")
TORSO_ANGLE = Quantity("torso_angle", "float(next_obs[1])", "pitch of the torso (rad, 0 level)")
POLE_ANGLE = Quantity("pole_angle", "float(next_obs[1])", "lean of the pole (rad, 0 upright)")
CART_POSITION = Quantity("cart_position", "float(next_obs[0])", "position of the cart (m)")
FINGER_DISTANCE = Quantity(
    "distance_to_target", "float(np.linalg.norm(next_obs[8:10]))", "fingertip to target (m)"
)

_PLANAR_BODY = [X_VELOCITY, Y_VELOCITY, DISTANCE, CONTROL, ALIVE]
CATALOG: dict[str, list[Quantity]] = {
    "HalfCheetah-v5": [X_VELOCITY, TORSO_HEIGHT, TORSO_ANGLE, CONTROL, ALIVE],
    "Hopper-v5": [X_VELOCITY, TORSO_HEIGHT, TORSO_ANGLE, HEALTHY, CONTROL, ALIVE],
    "Walker2d-v5": [X_VELOCITY, TORSO_HEIGHT, TORSO_ANGLE, HEALTHY, CONTROL, ALIVE],
    "Ant-v5": [*_PLANAR_BODY, TORSO_HEIGHT, HEALTHY],
    "Humanoid-v5": [*_PLANAR_BODY, TORSO_HEIGHT, HEALTHY],
    "Swimmer-v5": _PLANAR_BODY,
    "Reacher-v5": [FINGER_DISTANCE, CONTROL, ALIVE],
    "InvertedPendulum-v5": [POLE_ANGLE, CART_POSITION, CONTROL, ALIVE],
}
"""The quantities of every MuJoCo env a session can run (``env_specs.ENV_SPECS``; the
catalog's tests hold the two together)."""


@dataclass(frozen=True)
class Objective:
    """What a reward can ask of a body: a proposal over its catalog, and its phrase.

    Attributes:
        name: ``forward``, ``backward``, ``still``, ``upright``, ``reach``.
        phrase: How "So the robot should …" ends for it, what a small model's likelihood
            ranks (DESIGN.md: ranking such continuations after "Intent: <intent>" got 10 to
            11 of 12 movement intents right).
        components: The objective's own terms.
    """

    name: str
    phrase: str
    components: tuple[Component, ...]


def _moving(still: tuple[Component, ...]) -> list[Objective]:
    return [
        Objective("forward", " move forward.", (Component("x_velocity", "linear", 1.0),)),
        Objective("backward", " move backwards.", (Component("x_velocity", "linear", -1.0),)),
        Objective("still", " stay still and not move.", still),
    ]


_STILL = (Component("x_velocity", "abs", 1.0),)
_STILL_PLANAR = (*_STILL, Component("y_velocity", "abs", 1.0))
_LEVEL = (Component("torso_angle", "abs", 1.0), Component("alive", "constant", 1.0))
OBJECTIVES: dict[str, list[Objective]] = {
    "HalfCheetah-v5": _moving((*_STILL, *_LEVEL)),
    "Hopper-v5": _moving(_STILL),
    "Walker2d-v5": _moving(_STILL),
    "Ant-v5": _moving(_STILL_PLANAR),
    "Humanoid-v5": _moving(_STILL_PLANAR),
    "Swimmer-v5": _moving(_STILL_PLANAR),
    "Reacher-v5": [
        Objective("reach", " reach the target.", (Component("distance_to_target", "linear", -1.0),))
    ],
    "InvertedPendulum-v5": [
        Objective(
            "upright",
            " keep the pole upright.",
            (Component("alive", "constant", 1.0), Component("pole_angle", "square", 25.0)),
        )
    ],
}
"""Each env's objectives, in a fixed order (the order ties are broken in)."""

SHAPING: dict[str, tuple[Component, ...]] = {
    "HalfCheetah-v5": (Component("control", "linear", -0.1),),
    "Hopper-v5": (Component("healthy", "linear", 1.0), Component("control", "linear", -0.001)),
    "Walker2d-v5": (Component("healthy", "linear", 1.0), Component("control", "linear", -0.001)),
    "Ant-v5": (Component("healthy", "linear", 1.0), Component("control", "linear", -0.5)),
    "Humanoid-v5": (Component("healthy", "linear", 5.0), Component("control", "linear", -0.1)),
    "Swimmer-v5": (Component("control", "linear", -0.0001),),
    "Reacher-v5": (Component("control", "linear", -1.0),),
    "InvertedPendulum-v5": (),
}
"""What every objective of a body gets too: the env's own control cost, and staying up for
bodies that can fall (their episode ends when they do), with the env's own weights."""


def quantities(env_id: str) -> dict[str, Quantity]:
    """``env_id``'s catalog by name.

    Raises:
        ConfigError: for an env without a catalog.
    """
    if env_id not in CATALOG:
        known = sorted(CATALOG)
        raise ConfigError(f"no term catalog for {env_id!r}: choose one of {known}")
    return {q.name: q for q in CATALOG[env_id]}


def objectives(env_id: str) -> list[Objective]:
    """``env_id``'s objectives (:data:`OBJECTIVES`).

    Raises:
        ConfigError: for an env without a catalog.
    """
    quantities(env_id)
    return OBJECTIVES[env_id]


def objective_proposal(env_id: str, objective: Objective) -> Proposal:
    """The proposal of ``objective`` on ``env_id``: its terms, then the body's shaping."""
    return Proposal(
        env_id=env_id,
        objective=objective.name,
        components=[*objective.components, *SHAPING[env_id]],
    )


def compile_for_env(proposal: Proposal) -> str:
    """The reward code of ``proposal`` over its env's catalog.

    Raises:
        ConfigError: for an env without a catalog, or a component it cannot compile.
    """
    return compile_proposal(proposal, quantities(proposal.env_id))
