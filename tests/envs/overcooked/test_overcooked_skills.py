"""Skills: reading replies, what each skill needs, where it is done."""

from __future__ import annotations

import pytest

from langmarl.core.errors import ParseError
from langmarl.envs.overcooked.kitchen import Kitchen
from langmarl.envs.overcooked.layouts import load_mdp
from langmarl.envs.overcooked.skills import SKILLS, Skill, parse_skill, skill_targets


@pytest.mark.parametrize(
    ("reply", "skill"),
    [
        ("put onion in pot", Skill.PUT_ONION_IN_POT),
        ("I will PICK_UP_DISH now.", Skill.PICK_UP_DISH),
        ("Skill: deliver soup", Skill.DELIVER_SOUP),
        ("fill dish with soup, then deliver soup", Skill.FILL_DISH),
        ("grab onion", Skill.PICK_UP_ONION),
        ("5", Skill.START_COOKING),
        ("wait", Skill.WAIT),
    ],
)
def test_a_reply_is_read_into_the_skill_it_names_first(reply: str, skill: Skill) -> None:
    assert parse_skill(reply) is skill


@pytest.mark.parametrize("reply", ["", "I like soup", "42"])
def test_a_reply_without_a_skill_is_a_parse_error(reply: str) -> None:
    with pytest.raises(ParseError):
        parse_skill(reply)


def test_skills_say_why_they_cannot_be_done() -> None:
    mdp = load_mdp("forced_coordination")
    kitchen, state = Kitchen.from_mdp(mdp), mdp.get_standard_start_state()
    # cook 0 stands on the pot side: no onions there, and nothing in hand to put anywhere
    assert skill_targets(kitchen, state, 0, Skill.PICK_UP_ONION) == (
        [],
        "no onion dispenser or counter with an onion within your reach",
    )
    assert skill_targets(kitchen, state, 0, Skill.PUT_ONION_IN_POT)[1] == (
        "you hold nothing; it needs an onion"
    )
    assert (
        skill_targets(kitchen, state, 0, Skill.PLACE_ON_COUNTER)[1] == "you hold nothing to place"
    )
    stations, reason = skill_targets(kitchen, state, 1, Skill.PICK_UP_ONION)
    assert reason is None and stations == [(0, 1), (0, 2)]
    assert skill_targets(kitchen, state, 1, Skill.WAIT) == ([], None)
    assert len(SKILLS) == 9 and SKILLS[-1] is Skill.WAIT
