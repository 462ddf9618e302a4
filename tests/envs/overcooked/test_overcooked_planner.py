"""Kitchen geometry, the BFS motion planner and how an episode ends a skill."""

from __future__ import annotations

from overcooked.mdp.overcooked_mdp import ObjectState

from langmarl.envs.overcooked.episode import STUCK_TICKS, Episode
from langmarl.envs.overcooked.kitchen import EAST, NORTH, SOUTH, Kitchen
from langmarl.envs.overcooked.layouts import load_mdp
from langmarl.envs.overcooked.planner import INTERACT, STAY, next_action
from langmarl.envs.overcooked.skills import Skill

CRAMPED = ["XXPXX", "O   O", "X   X", "XDXSX"]


def test_routes_go_around_the_partner_and_stop_where_nothing_leads() -> None:
    kitchen = Kitchen(CRAMPED)
    assert kitchen.access[(2, 0)] == ((2, 1),)  # the pot is used from the tile below it
    assert kitchen.first_move((1, 2), [(3, 1)]) in (NORTH, EAST)
    assert kitchen.first_move((1, 1), [(3, 1)], blocked=[(2, 1)]) == SOUTH  # around cook 1
    assert kitchen.first_move((1, 1), [(1, 1)]) is None  # already there
    assert kitchen.first_move((1, 1), [(0, 0)]) is None  # a counter: never walkable
    assert kitchen.distances((1, 1), blocked=[(2, 1), (1, 2)]) == {(1, 1): 0}


def test_next_to_a_station_the_cook_turns_to_it_then_interacts() -> None:
    mdp = load_mdp("cramped_room")
    kitchen, state = Kitchen.from_mdp(mdp), mdp.get_standard_start_state()
    # cook 0 at (1, 2) faces up; the dish dispenser (1, 3) is below it
    assert next_action(kitchen, state, 0, [(1, 3)]) == (SOUTH, (1, 3))
    state.players[0].update_pos_and_or((1, 2), SOUTH)
    assert next_action(kitchen, state, 0, [(1, 3)]) == (INTERACT, (1, 3))
    assert next_action(kitchen, state, 0, [(0, 1)]) == (NORTH, None)  # walk to (1, 1) first
    assert next_action(kitchen, state, 0, []) == (STAY, None)
    assert next_action(kitchen, state, 1, [(4, 1)]) == (EAST, (4, 1))


def test_a_cook_blocked_by_its_partner_gives_up_after_a_while() -> None:
    mdp = load_mdp("cramped_room")
    episode = Episode(mdp, Kitchen.from_mdp(mdp), horizon=40)
    episode.state.players[0].set_object(ObjectState("onion", (1, 2)))
    episode.state.players[1].update_pos_and_or((2, 1), NORTH)  # on the pot's only access tile
    assert episode.assign(0, Skill.PUT_ONION_IN_POT) is None
    while episode.last_result(0) is None:
        if episode.tasks[1] is None:
            episode.assign(1, Skill.WAIT)
        episode.tick()
    result = episode.last_result(0)
    assert result is not None and not result.ok and result.reason.startswith("blocked")
    assert STUCK_TICKS <= episode.timestep <= STUCK_TICKS + 3


def test_a_skill_that_cannot_start_fails_at_once_and_costs_one_tick() -> None:
    mdp = load_mdp("cramped_room")
    episode = Episode(mdp, Kitchen.from_mdp(mdp), horizon=10)
    assert episode.assign(0, Skill.DELIVER_SOUP) == "you hold nothing; it needs a soup"
    episode.assign(1, Skill.WAIT)
    assert episode.awaiting() == []
    episode.tick()
    assert episode.awaiting() == [0, 1] and episode.timestep == 1
    assert [r.ok for r in episode.results[0]] == [False]
