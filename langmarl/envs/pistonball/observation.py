"""A piston's text observation, built from the physics state (pure).

Distances are in piston widths (one width = the ball's radius, 40 px), velocities in piston
widths per cycle, so the numbers are small and mean the same at any number of pistons.
"""

from __future__ import annotations

from string import Template

from langmarl.envs.pistonball import prompts
from langmarl.envs.pistonball.physics import MAX_HEIGHT, ActionMode, PhysicsState

AT_REST = 0.02
"""Speeds below this many piston widths per cycle are reported as "at rest"."""


def piston_id(index: int) -> str:
    """PettingZoo's name of piston ``index`` (``piston_0`` is next to the left wall)."""
    return f"piston_{index}"


def _where(offset: float) -> str:
    """The ball's side as seen from a piston (``offset`` = ball x - piston centre)."""
    if abs(offset) < 0.5:
        return "over you"
    side = "left" if offset < 0 else "right"
    return f"{abs(offset):.1f} pistons to your {side}"


def _motion(vx: float, vy: float) -> str:
    parts = []
    if abs(vx) >= AT_REST:
        parts.append(f"rolling {'left' if vx < 0 else 'right'} {abs(vx):.2f}")
    if abs(vy) >= AT_REST:
        parts.append(f"{'falling' if vy < 0 else 'rising'} {abs(vy):.2f}")
    return ", ".join(parts) + " per cycle" if parts else "at rest"


def observe(
    state: PhysicsState,
    index: int,
    *,
    cycle: int,
    max_cycles: int,
    action_mode: ActionMode,
) -> str:
    """What piston ``index`` reads before acting in ``cycle`` (1-based)."""
    offset = state.ball.x - (index + 0.5)
    gap = state.ball.bottom - state.tops[index]
    gap_text = f"{gap:.1f} above your head" if gap >= 0.05 else "touching you"
    if abs(offset) >= state.ball.radius + 0.5:
        gap_text = f"{state.ball.bottom:.1f} above the floor"
    return Template(prompts.OBSERVATION).substitute(
        agent_id=piston_id(index),
        number=index + 1,
        num_pistons=len(state.heights),
        cycle=cycle,
        max_cycles=max_cycles,
        height=state.heights[index],
        max_height=MAX_HEIGHT,
        where=_where(offset),
        gap=gap_text,
        motion=_motion(state.ball.vx, state.ball.vy),
        reply_rule=prompts.REPLY_RULE[action_mode],
    )
