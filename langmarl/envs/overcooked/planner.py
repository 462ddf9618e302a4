"""The motion planner: one primitive action that brings a cook closer to doing its skill.

Replanned every tick from the current state (a breadth-first search over a few dozen floor
tiles costs microseconds), so a cook reacts to its partner moving. The package's own
planners precompute all-pairs plans, write pickles into the installed package and, in this
fork, crash inside the multi-agent wrapper; ours needs nothing precomputed.

Rules:

1. Standing next to a target station: face it (a move towards a station only turns the
   cook), then interact.
2. Otherwise walk one step along a shortest route to the nearest tile next to a target,
   treating the partner's tile as a wall; if the partner blocks every route, plan through
   it anyway (the move then bumps and the cook stays, which is the game's own rule), so a
   partner that moves on frees the way.
"""

from __future__ import annotations

from typing import Any

from langmarl.envs.overcooked.kitchen import DIRECTIONS, Direction, Kitchen, Pos, step_from

INTERACT = "interact"
STAY: Direction = (0, 0)
Primitive = Direction | str
"""A package action: a direction tuple, ``STAY`` or ``"interact"``."""


def facing_direction(pos: Pos, station: Pos) -> Direction | None:
    """The direction from ``pos`` to the adjacent ``station`` (``None`` if not adjacent)."""
    delta = (station[0] - pos[0], station[1] - pos[1])
    return delta if delta in DIRECTIONS else None


def next_action(
    kitchen: Kitchen, state: Any, cook: int, stations: list[Pos]
) -> tuple[Primitive, Pos | None]:
    """The primitive action for ``cook`` towards one of ``stations`` and the station it is
    working at once adjacent (``None`` while still walking).

    Returns ``(STAY, None)`` when no station can be reached at all.
    """
    player = state.players[cook]
    pos, facing = player.position, player.orientation
    adjacent = [s for s in stations if facing_direction(pos, s) is not None]
    if adjacent:
        station = next((s for s in adjacent if step_from(pos, facing) == s), adjacent[0])
        direction = facing_direction(pos, station)
        return (INTERACT if direction == facing else direction), station  # type: ignore[return-value]
    goals = {a for s in stations for a in kitchen.access.get(s, ())}
    partner = state.players[1 - cook].position
    move = kitchen.first_move(pos, goals, blocked=[partner])
    if move is None:
        move = kitchen.first_move(pos, goals)
    return (move if move is not None else STAY), None
