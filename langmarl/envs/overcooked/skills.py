"""Skill-level actions: their names, how a reply is read into one, and where each is done.

A skill is a short errand (``put onion in pot``) that the motion planner turns into primitive
moves: walk next to a target station, face it, interact. :func:`skill_targets` decides, for
one cook in one state, which stations can serve the skill, or why the skill cannot be done
now (wrong thing in hand, nothing reachable); the episode then lets the cook wait one tick
and asks again, so a wrong choice costs time, as it would in the game.

Decisions:

- Pick-ups take from a dispenser or from a counter holding that object, whichever is
  nearer, so a cook that cannot reach a dispenser (forced_coordination) can still fetch what
  its partner put on a shared counter.
- ``place on counter`` prefers free counters the partner can reach too: putting something
  down is how one cook hands it to the other.
- ``fill dish with soup`` also targets a pot that is still cooking; the cook walks there and
  waits beside it until the soup is ready.
- ``start cooking`` exists because the package's (new) dynamics start a pot only on an
  empty-handed interact; a pot of three onions does not start by itself.
- Reading a reply (:func:`parse_skill`): the earliest skill name in the text wins (case,
  ``_`` and ``-`` ignored, a few synonyms accepted); a reply that is only a skill number
  (``3``) picks that skill of :data:`SKILLS`. Anything else raises :class:`ParseError`; the
  environment's documented fallback is ``wait``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import StrEnum
from typing import Any

from langmarl.core.errors import ParseError
from langmarl.envs.overcooked.kitchen import Kitchen, Pos


class Skill(StrEnum):
    """The skills a cook can choose (the value is the text the cook writes)."""

    PICK_UP_ONION = "pick up onion"
    PICK_UP_DISH = "pick up dish"
    PICK_UP_SOUP = "pick up soup"
    PUT_ONION_IN_POT = "put onion in pot"
    START_COOKING = "start cooking"
    FILL_DISH = "fill dish with soup"
    DELIVER_SOUP = "deliver soup"
    PLACE_ON_COUNTER = "place on counter"
    WAIT = "wait"


SKILLS: tuple[Skill, ...] = tuple(Skill)
"""The skills in the order the observation lists (and numbers) them."""

SYNONYMS: dict[str, Skill] = {
    "get onion": Skill.PICK_UP_ONION,
    "grab onion": Skill.PICK_UP_ONION,
    "pickup onion": Skill.PICK_UP_ONION,
    "get dish": Skill.PICK_UP_DISH,
    "grab dish": Skill.PICK_UP_DISH,
    "pickup dish": Skill.PICK_UP_DISH,
    "pickup soup": Skill.PICK_UP_SOUP,
    "put onion in the pot": Skill.PUT_ONION_IN_POT,
    "cook soup": Skill.START_COOKING,
    "start cook": Skill.START_COOKING,
    "fill dish": Skill.FILL_DISH,
    "serve soup": Skill.DELIVER_SOUP,
    "deliver": Skill.DELIVER_SOUP,
    "place on the counter": Skill.PLACE_ON_COUNTER,
    "put down": Skill.PLACE_ON_COUNTER,
    "stay": Skill.WAIT,
}
"""Other phrasings read as a skill (the skill names themselves always are)."""

_PHRASES = sorted([(s.value, s) for s in SKILLS] + list(SYNONYMS.items()), key=lambda p: -len(p[0]))


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[_\-]+", " ", text.lower()).split())


def parse_skill(reply: str) -> Skill:
    """The skill a cook's reply names (see the module docstring for the rules).

    Raises:
        ParseError: if the reply names no skill.
    """
    text = _normal(reply)
    found = [(text.find(phrase), -len(phrase), skill) for phrase, skill in _PHRASES]
    hits = [hit for hit in found if hit[0] >= 0]
    if hits:
        return min(hits)[2]
    number = re.fullmatch(r"\W*(\d+)\W*", text)
    if number and 1 <= int(number.group(1)) <= len(SKILLS):
        return SKILLS[int(number.group(1)) - 1]
    raise ParseError("an Overcooked skill", reply)


# -- what each skill needs and where it is done ------------------------------------------------
def held(state: Any, cook: int) -> str | None:
    """The name of what cook ``cook`` holds (``onion``, ``dish``, ``soup``) or ``None``."""
    obj = state.players[cook].held_object
    return None if obj is None else str(obj.name)


def counter_items(kitchen: Kitchen, state: Any, name: str) -> list[Pos]:
    """Counters holding an object called ``name``."""
    return [p for p, obj in state.objects.items() if obj.name == name and kitchen.letter(p) == "X"]


def pot_soup(state: Any, pot: Pos) -> Any:
    """The package's soup object in ``pot`` (``None`` for an empty pot)."""
    return state.objects.get(pot)


def _pick_up(name: str, dispenser: str | None) -> Callable[[Kitchen, Any, int], list[Pos]]:
    def targets(kitchen: Kitchen, state: Any, cook: int) -> list[Pos]:
        sources = list(kitchen.stations[dispenser]) if dispenser else []
        return sources + counter_items(kitchen, state, name)

    return targets


def _pots_with_room(kitchen: Kitchen, state: Any, cook: int) -> list[Pos]:
    return [
        p
        for p in kitchen.stations["P"]
        if pot_soup(state, p) is None or not pot_soup(state, p).is_full
    ]


def _pots_to_start(kitchen: Kitchen, state: Any, cook: int) -> list[Pos]:
    return [
        p
        for p in kitchen.stations["P"]
        if pot_soup(state, p) is not None and pot_soup(state, p).is_idle
    ]


def _pots_with_soup(kitchen: Kitchen, state: Any, cook: int) -> list[Pos]:
    soups = [(p, pot_soup(state, p)) for p in kitchen.stations["P"]]
    ready = [p for p, s in soups if s is not None and s.is_ready]
    return ready or [p for p, s in soups if s is not None and s.is_cooking]


def _serving(kitchen: Kitchen, state: Any, cook: int) -> list[Pos]:
    return list(kitchen.stations["S"])


def _free_counters(kitchen: Kitchen, state: Any, cook: int) -> list[Pos]:
    free = [p for p in kitchen.stations["X"] if p not in state.objects]
    partner = state.players[1 - cook].position
    shared_reach = kitchen.distances(partner)
    shared = [p for p in free if kitchen.station_distance(shared_reach, p) is not None]
    return shared or free


TARGETS: dict[Skill, Callable[[Kitchen, Any, int], list[Pos]]] = {
    Skill.PICK_UP_ONION: _pick_up("onion", "O"),
    Skill.PICK_UP_DISH: _pick_up("dish", "D"),
    Skill.PICK_UP_SOUP: _pick_up("soup", None),
    Skill.PUT_ONION_IN_POT: _pots_with_room,
    Skill.START_COOKING: _pots_to_start,
    Skill.FILL_DISH: _pots_with_soup,
    Skill.DELIVER_SOUP: _serving,
    Skill.PLACE_ON_COUNTER: _free_counters,
}
"""Skill → the stations that can serve it in a state (before reachability)."""

NEEDS_IN_HAND: dict[Skill, str | None] = {
    Skill.PICK_UP_ONION: None,
    Skill.PICK_UP_DISH: None,
    Skill.PICK_UP_SOUP: None,
    Skill.PUT_ONION_IN_POT: "onion",
    Skill.START_COOKING: None,
    Skill.FILL_DISH: "dish",
    Skill.DELIVER_SOUP: "soup",
}
"""What a skill needs in hand (``None``: empty hands); ``place on counter`` needs anything."""

WHAT = {
    Skill.PICK_UP_ONION: "no onion dispenser or counter with an onion",
    Skill.PICK_UP_DISH: "no dish dispenser or counter with a dish",
    Skill.PICK_UP_SOUP: "no counter with a soup",
    Skill.PUT_ONION_IN_POT: "no pot with room for an onion",
    Skill.START_COOKING: "no pot with onions waiting to cook",
    Skill.FILL_DISH: "no pot with soup cooking or ready",
    Skill.DELIVER_SOUP: "no serving window",
    Skill.PLACE_ON_COUNTER: "no free counter",
}


def skill_targets(
    kitchen: Kitchen, state: Any, cook: int, skill: Skill
) -> tuple[list[Pos], str | None]:
    """``(stations, None)`` where ``cook`` can do ``skill`` now, or ``([], why not)``.

    ``wait`` has no station and is always possible (``([], None)``).
    """
    if skill is Skill.WAIT:
        return [], None
    in_hand = held(state, cook)
    if skill is Skill.PLACE_ON_COUNTER:
        if in_hand is None:
            return [], "you hold nothing to place"
    elif NEEDS_IN_HAND[skill] != in_hand:
        need = NEEDS_IN_HAND[skill]
        having = f"you hold {_a(in_hand)}" if in_hand else "you hold nothing"
        return [], f"{having}; it needs {_a(need) if need else 'empty hands'}"
    reach = kitchen.distances(state.players[cook].position)
    stations = [
        p
        for p in TARGETS[skill](kitchen, state, cook)
        if kitchen.station_distance(reach, p) is not None
    ]
    return (stations, None) if stations else ([], f"{WHAT[skill]} within your reach")


def _a(name: str | None) -> str:
    return f"an {name}" if name and name[0] in "aeiou" else f"a {name}"
