"""The scripted greedy cook: a fixed priority list over skills, for partners and baselines.

It looks at the state only (no LLM) and picks the first skill that applies:

1. holding soup → deliver it (or put it on a counter the partner can reach);
2. holding a dish → fill it from a cooking or ready pot (or hand it over on a counter);
3. holding an onion → put it in a pot with room (or hand it over on a counter);
4. empty-handed, with a pot in reach: start a full pot; fetch a dish when a soup is
   cooking or ready and nobody carries one; fetch an onion (while a pot has room, else
   for the next soup);
5. a cook that cannot reach any pot (forced_coordination) keeps a shared counter stocked
   with an onion and, once soup is under way, a dish;
6. otherwise wait.

Good enough to deliver soups on every classic layout with another greedy cook; it does not
plan ahead or avoid its partner.
"""

from __future__ import annotations

from typing import Any

from langmarl.envs.overcooked.kitchen import Kitchen
from langmarl.envs.overcooked.skills import Skill, counter_items, held, pot_soup, skill_targets


def _can(kitchen: Kitchen, state: Any, cook: int, skill: Skill) -> bool:
    return skill_targets(kitchen, state, cook, skill)[1] is None


def greedy_skill(kitchen: Kitchen, state: Any, cook: int) -> Skill:
    """The greedy cook's next skill for ``cook`` in ``state``."""
    in_hand = held(state, cook)
    wanted = {"soup": Skill.DELIVER_SOUP, "dish": Skill.FILL_DISH, "onion": Skill.PUT_ONION_IN_POT}
    if in_hand is not None:
        skill = wanted.get(in_hand, Skill.PLACE_ON_COUNTER)
        if _can(kitchen, state, cook, skill):
            return skill
        reach_pots = _can_reach_pots(kitchen, state, cook)
        if in_hand == "dish" and reach_pots:
            return Skill.WAIT  # pots are reachable but nothing cooks yet: keep the dish
        return Skill.PLACE_ON_COUNTER
    if not _can_reach_pots(kitchen, state, cook):
        return _supplier_skill(kitchen, state, cook)
    soups = [pot_soup(state, p) for p in kitchen.stations["P"]]
    if _can(kitchen, state, cook, Skill.START_COOKING) and any(
        s is not None and s.is_idle and s.is_full for s in soups
    ):
        return Skill.START_COOKING
    dish_needed = any(s is not None and not s.is_idle for s in soups)
    partner_has_dish = held(state, 1 - cook) == "dish"
    if dish_needed and not partner_has_dish and _can(kitchen, state, cook, Skill.PICK_UP_DISH):
        return Skill.PICK_UP_DISH
    onions_coming = int(held(state, 1 - cook) == "onion")
    if _room_in_pots(soups) > onions_coming and _can(kitchen, state, cook, Skill.PICK_UP_ONION):
        return Skill.PICK_UP_ONION
    if _can(kitchen, state, cook, Skill.PICK_UP_ONION):
        return Skill.PICK_UP_ONION  # for the next soup; also clears the way at a pot
    return Skill.WAIT


def _room_in_pots(soups: list[Any]) -> int:
    """Onions the pots can still take before cooking."""
    return sum(3 if s is None else (3 - len(s.ingredients) if s.is_idle else 0) for s in soups)


def _can_reach_pots(kitchen: Kitchen, state: Any, cook: int) -> bool:
    reach = kitchen.distances(state.players[cook].position)
    return any(kitchen.station_distance(reach, p) is not None for p in kitchen.stations["P"])


def _supplier_skill(kitchen: Kitchen, state: Any, cook: int) -> Skill:
    """Stock a counter the partner can reach: onions while pots have room, then a dish."""
    partner_reach = kitchen.distances(state.players[1 - cook].position)

    def shared(name: str) -> int:
        items = counter_items(kitchen, state, name)
        return sum(kitchen.station_distance(partner_reach, p) is not None for p in items)

    soups = [pot_soup(state, p) for p in kitchen.stations["P"]]
    if shared("onion") < min(2, _room_in_pots(soups)):
        return Skill.PICK_UP_ONION
    cooking = any(s is not None and (not s.is_idle or s.is_full) for s in soups)
    if cooking and shared("dish") == 0 and held(state, 1 - cook) != "dish":
        return Skill.PICK_UP_DISH
    return Skill.WAIT
