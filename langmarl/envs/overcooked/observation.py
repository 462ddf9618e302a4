"""A cook's text observation of the kitchen (pure: state in, text out)."""

from __future__ import annotations

from string import Template
from typing import Any

from langmarl.envs.overcooked import prompts
from langmarl.envs.overcooked.episode import Episode
from langmarl.envs.overcooked.kitchen import DIRECTION_NAMES, STATIONS, Kitchen, Pos
from langmarl.envs.overcooked.skills import SKILLS, held

ITEM_MARKS = {"onion": "o", "dish": "d", "soup": "s"}


def describe_item(name: str | None) -> str:
    """``"an onion"``, ``"a dish"``, ``"a soup"`` or ``"nothing"``."""
    if name is None:
        return "nothing"
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"


def render_grid(kitchen: Kitchen, state: Any) -> str:
    """The map as text: terrain letters, cooks as ``0``/``1``, counter items as letters."""
    rows = [list(row) for row in kitchen.rows]
    for pos, obj in state.objects.items():
        if kitchen.letter(pos) == "X":
            rows[pos[1]][pos[0]] = ITEM_MARKS.get(obj.name, "?")
    for index, player in enumerate(state.players):
        x, y = player.position
        rows[y][x] = str(index)
    return "\n".join("".join(row) for row in rows)


def describe_pot(state: Any, pot: Pos) -> str:
    """One pot's state: empty, ``n`` of 3 onions, cooking with ticks left, or ready."""
    soup = state.objects.get(pot)
    if soup is None:
        status = "empty"
    elif soup.is_ready:
        status = "soup ready"
    elif soup.is_cooking:
        status = f"cooking, {soup.cook_time_remaining} ticks left"
    else:
        count = len(soup.ingredients)
        status = f"{count} of 3 onions, not cooking" + (
            " (full: start cooking)" if count == 3 else ""
        )
    return f"pot at {pot}: {status}"


def describe_reach(kitchen: Kitchen, state: Any, cook: int) -> str:
    """Each kind of station with the steps to the nearest one, or "not reachable"."""
    reach = kitchen.distances(state.players[cook].position)
    parts = []
    for letter, name in STATIONS.items():
        if letter == "X":
            continue
        steps = [kitchen.station_distance(reach, p) for p in kitchen.stations[letter]]
        known = [s for s in steps if s is not None]
        parts.append(f"{name} ({min(known)} steps)" if known else f"{name} (not reachable)")
    return ", ".join(parts)


def observe(episode: Episode, cook: int, agent_ids: list[str], layout: str) -> str:
    """What cook ``cook`` sees before choosing its next skill."""
    state, kitchen = episode.state, episode.kitchen
    me, partner = state.players[cook], state.players[1 - cook]
    partner_task = episode.tasks[1 - cook]
    items = [
        f"{obj.name} at {pos}"
        for pos, obj in sorted(state.objects.items())
        if kitchen.letter(pos) == "X"
    ]
    result = episode.last_result(cook)
    last = (
        Template(prompts.LAST_RESULT[result.ok]).substitute(
            skill=result.skill.value, reason=result.reason
        )
        if result is not None
        else ""
    )
    return (
        Template(prompts.OBSERVATION)
        .substitute(
            layout=layout,
            timestep=episode.timestep,
            horizon=episode.horizon,
            soups=episode.soups,
            reward=f"{episode.reward:g}",
            grid=render_grid(kitchen, state),
            agent_id=agent_ids[cook],
            position=me.position,
            facing=DIRECTION_NAMES.get(me.orientation, str(me.orientation)),
            holding=describe_item(held(state, cook)),
            partner_id=agent_ids[1 - cook],
            partner_position=partner.position,
            partner_holding=describe_item(held(state, 1 - cook)),
            partner_skill=partner_task.skill.value if partner_task is not None else "choosing",
            pots="; ".join(describe_pot(state, p) for p in kitchen.stations["P"]),
            counter_items=", ".join(items) or "nothing",
            reachable=describe_reach(kitchen, state, cook),
            last=last,
            skills=" | ".join(skill.value for skill in SKILLS),
        )
        .replace("\n\n", "\n")
    )
