"""The PettingZoo side: building ``pistonball_v6`` and reading its physics state.

Observations are read from the simulator's internals (piston bodies, the ball's position
and velocity), not from pixels: a text agent needs numbers, and rendering costs time.
Positions are converted to *piston widths from the left wall* (piston ``i``'s centre is at
``i + 0.5``) and heights to PettingZoo's 17 piston positions (0 = fully down, 16 = fully
up), so the rest of the package never sees pixels.

pettingzoo and pygame load on first use (``import langmarl`` stays cheap); pygame is told to
use its dummy video driver so episodes and recordings run headless.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal

from langmarl.core.errors import MissingDependencyError

ActionMode = Literal["discrete", "continuous"]
MAX_HEIGHT = 16
"""Highest piston position (PettingZoo's ``n_piston_positions``)."""


@dataclass(frozen=True)
class BallState:
    """The ball, in piston widths (x from the left wall, y up from the floor).

    Attributes:
        x: Centre, from the left wall (the ball touches the wall at ``radius``).
        bottom: Height of its lowest point above the piston bases' top.
        vx: Horizontal velocity per cycle (negative: towards the wall).
        vy: Vertical velocity per cycle (negative: falling).
        radius: Its radius.
    """

    x: float
    bottom: float
    vx: float
    vy: float
    radius: float


@dataclass(frozen=True)
class PhysicsState:
    """One moment of the simulation.

    Attributes:
        heights: Each piston's position, 0 (down) to :data:`MAX_HEIGHT` (up).
        tops: Each piston head's height, in piston widths above the bases' top.
        ball: The ball.
    """

    heights: list[int]
    tops: list[float]
    ball: BallState

    @property
    def wall_distance(self) -> float:
        """Piston widths between the ball's left edge and the wall."""
        return max(0.0, self.ball.x - self.ball.radius)


def _pistonball() -> Any:
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    try:
        # The module behind ``pettingzoo.butterfly.pistonball_v6`` (whose import warns that
        # the registry-less API is deprecated; this is the same environment, version 6).
        from pettingzoo.butterfly.pistonball import pistonball
    except ImportError as exc:
        raise MissingDependencyError("pettingzoo[butterfly]", "games", "Pistonball") from exc
    return pistonball


def make_parallel_env(
    num_pistons: int,
    max_cycles: int,
    action_mode: ActionMode,
    *,
    random_drop: bool = True,
    random_rotate: bool = True,
    render: bool = False,
) -> Any:
    """A fresh ``pistonball_v6`` parallel env (one per episode: episodes share nothing).

    Args:
        render: Draw every cycle so ``env.render()`` returns RGB frames (slower).
    """
    return _pistonball().parallel_env(
        n_pistons=num_pistons,
        max_cycles=max_cycles,
        continuous=action_mode == "continuous",
        random_drop=random_drop,
        random_rotate=random_rotate,
        render_mode="rgb_array" if render else None,
    )


def read_state(env: Any) -> PhysicsState:
    """The physics state of a ``pistonball_v6`` env (parallel or raw)."""
    raw = env.unwrapped
    width = float(raw.piston_width)
    lowest = raw.screen_height - raw.wall_width - (raw.piston_height - raw.piston_head_height)
    base_top = raw.screen_height - raw.wall_width - raw.piston_body_height
    heights = [round((lowest - p.position[1]) / raw.pixels_per_position) for p in raw.pistonList]
    tops = [(base_top - (p.position[1] - raw.piston_radius)) / width for p in raw.pistonList]
    x, y = raw.ball.position
    vx, vy = raw.ball.velocity
    ball = BallState(
        x=(x - raw.wall_width) / width,
        bottom=(base_top - (y + raw.ball_radius)) / width,
        vx=vx * raw.dt / width,
        vy=-vy * raw.dt / width,
        radius=raw.ball_radius / width,
    )
    return PhysicsState(heights=heights, tops=tops, ball=ball)


def env_action(move: float, action_mode: ActionMode) -> Any:
    """PettingZoo's action for ``move`` in [-1, 1] (discrete: 0 down, 1 stay, 2 up)."""
    if action_mode == "continuous":
        import numpy as np

        return np.array([move], dtype=np.float32)
    return 1 + (move > 0) - (move < 0)
