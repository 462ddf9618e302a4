"""Turning a piston's reply into a move (pure).

A move is a number in [-1, 1]: -1 down, 0 stay, 1 up (continuous mode: any value between,
the piston moving ``4 px x move``). Both modes read the first action word (up/raise/lift,
down/lower/drop, stay/hold/wait/still) or, failing that, the first number; numbers are
clipped to [-1, 1], and in discrete mode a number's sign picks up or down (|x| < 1/3: stay).

The instruction's list of options ("up, down or stay", "-1 (down) to 1 (up)") is removed
first: small models often echo their prompt, and an echo is not a decision (it would read as
"up" every time).

A reply with neither takes the documented fallback: **stay** (move 0), reported as
``ok=False`` so the episode counts it as a parse failure instead of hiding it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from langmarl.envs.pistonball.physics import ActionMode

WORDS = {
    "up": 1.0,
    "raise": 1.0,
    "lift": 1.0,
    "rise": 1.0,
    "down": -1.0,
    "lower": -1.0,
    "drop": -1.0,
    "stay": 0.0,
    "hold": 0.0,
    "wait": 0.0,
    "still": 0.0,
}
FALLBACK = 0.0
"""The move of an unreadable reply: stay."""
DEAD_ZONE = 1 / 3
"""In discrete mode a number within this of 0 means stay."""

_ECHO = re.compile(r"up,?\s*down,?\s*or\s*stay|-1\s*\(down\)\s*to\s*1\s*\(up\)", re.IGNORECASE)
_WORD = re.compile(r"\b(" + "|".join(WORDS) + r")\b", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)")


@dataclass(frozen=True)
class Move:
    """A parsed reply.

    Attributes:
        value: The move in [-1, 1] (discrete: exactly -1, 0 or 1).
        ok: False when the reply had no action and :data:`FALLBACK` was used.
    """

    value: float
    ok: bool = True


def _read(reply: str) -> float | None:
    reply = _ECHO.sub(" ", reply)
    word = _WORD.search(reply)
    if word:
        return WORDS[word.group(1).lower()]
    number = _NUMBER.search(reply)
    return max(-1.0, min(1.0, float(number.group()))) if number else None


def _discrete(value: float) -> float:
    return 0.0 if abs(value) < DEAD_ZONE else (1.0 if value > 0 else -1.0)


def _continuous(value: float) -> float:
    return round(value, 3)


_SNAP = {"discrete": _discrete, "continuous": _continuous}


def parse_move(reply: str, action_mode: ActionMode) -> Move:
    """The move ``reply`` asks for in ``action_mode`` (see the module docstring)."""
    value = _read(reply)
    if value is None:
        return Move(FALLBACK, ok=False)
    return Move(_SNAP[action_mode](value))


def move_name(value: float) -> str:
    """``up``, ``down`` or ``stay`` for a move (by sign, with the discrete dead zone)."""
    return {1.0: "up", -1.0: "down", 0.0: "stay"}[_discrete(value)]
