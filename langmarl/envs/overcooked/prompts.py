"""The Overcooked texts shown to cooks and to the critic, as data (``string.Template``)."""

from __future__ import annotations

DESCRIPTION = """\
Overcooked ($layout): two cooks share a kitchen and make onion soup. A soup needs three \
onions put in a pot, an empty-handed cook to start cooking it, a dish filled with the \
cooked soup, and delivery at the serving window: +20 per delivered soup, within $horizon \
ticks. Each cook chooses skills (pick up onion, put onion in pot, ...) that a motion planner \
carries out; a skill that cannot be done wastes a tick. The cooks succeed only by splitting \
the work and staying out of each other's way."""

ROLES = {
    "cook_0": "the first cook (marked 0 on the map)",
    "cook_1": "the second cook (marked 1 on the map)",
}

POLICY = """\
You are $agent_id, $role, in an Overcooked kitchen with one partner. Each turn, reply with \
exactly one skill from the list, for example: put onion in pot.
Make soups: put three onions in a pot, start cooking, fill a dish with the cooked soup and \
deliver it. Do what your partner is not already doing."""

OBSERVATION = """\
Layout $layout, tick $timestep of $horizon. Soups delivered: $soups (reward $reward).
Map (x to the right, y down; X counter, O onions, D dishes, P pot, S serving window, \
0/1 cooks, o/d/s onion/dish/soup on a counter):
$grid
You are $agent_id at $position facing $facing, holding $holding.
Partner $partner_id at $partner_position holding $partner_holding, doing: $partner_skill.
Pots: $pots
On counters: $counter_items
You can reach: $reachable
$last
Skills: $skills
Reply with one skill."""

LAST_RESULT = {
    True: "Your last skill: $skill (done).",
    False: "Your last skill: $skill (failed: $reason).",
}

UNREADABLE = "no skill named in the reply; waited one tick"
"""The error recorded for a reply that names no skill (the documented fallback: ``wait``)."""

EPISODE_FACT = "{soups} soups delivered (reward {reward:g}) in {ticks} ticks."
COOK_FACT = (
    "{cook} ({kind}): picked up {onion_pickup} onions, put {potting_onion} in pots, picked up "
    "{dish_pickup} dishes, filled {soup_pickup} with soup, delivered {soup_delivery}; "
    "{failed} skills failed."
)
"""The facts counted by the MDP that the critic sees (grounded feedback)."""
