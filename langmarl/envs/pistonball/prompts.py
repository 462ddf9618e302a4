"""Pistonball's texts, as data: the critic's context, roles, the default policy and the
observation a piston reads every cycle (``string.Template`` placeholders)."""

from __future__ import annotations

DESCRIPTION = """\
Pistonball: $num_pistons pistons stand in a row, piston_0 next to the left wall. A ball \
starts on the right. Every cycle each piston moves up, down or stays ($action_text). The \
team shares one reward: +100 x the fraction of the starting distance the ball moves towards \
the left wall (negative when it rolls back), and -0.1 per cycle until the ball reaches the \
wall; an episode lasts at most $max_cycles cycles. The ball rolls downhill: pistons at and \
to the right of the ball rising while those to its left go down make a slope that rolls it \
left; pistons far from the ball matter little until it reaches them."""

ACTION_TEXT = {
    "discrete": "one of up, down, stay",
    "continuous": "a number from -1 = down to 1 = up",
}

ROLE = "piston $number of $num_pistons from the left wall"

REGION_ROLE = "pistons $first to $last (as a group: each gets this section's feedback)"

POLICY = "You are $agent_id, a piston. Help your team roll the ball to the left wall. $reply_rule"

REPLY_RULE = {
    "discrete": "Reply up, down or stay.",
    "continuous": "Reply a number from -1 (down) to 1 (up).",
}

# Short on purpose: every piston reads one each cycle, and prompt tokens are most of what
# the embedded model spends per request (about 150 tokens with a longer wording, 80 now).
OBSERVATION = """\
$agent_id ($number of $num_pistons from the left wall), cycle $cycle of $max_cycles.
Your height: $height of $max_height. Ball, in piston widths: $where, $gap; $motion.
$reply_rule"""
