"""The pure rules of validated updates: the winner, the verdict, unvalidated decisions."""

from langmarl.core.records import PolicyUpdate
from langmarl.trainer.decisions import (
    TeamScore,
    digest,
    pick_winner,
    unvalidated_decisions,
    verdict,
)


def test_the_highest_score_wins_the_first_on_ties_and_failures_never() -> None:
    scores = [TeamScore(score=0.5), TeamScore(error="down"), TeamScore(score=0.75)]
    assert pick_winner(scores) == 2
    assert pick_winner([TeamScore(score=0.5), TeamScore(score=0.5)]) == 0
    assert pick_winner([TeamScore(error="down")]) is None and pick_winner([]) is None
    assert pick_winner([TeamScore(score=0.0), TeamScore(score=0.0)]) == 0


def test_verdict_accepts_not_lower_and_never_a_failure() -> None:
    assert verdict(TeamScore(score=0.5), TeamScore(score=0.5)) == (
        True,
        "scored 0.500 >= current 0.500",
    )
    assert verdict(TeamScore(score=0.25), TeamScore(score=0.5))[0] is False
    accepted, reason = verdict(TeamScore(error="timeout"), TeamScore(score=0.0))
    assert not accepted and reason == "validation failed: timeout"
    accepted, reason = verdict(TeamScore(score=1.0), TeamScore(error="down"))
    assert not accepted and reason == "the current policies could not be scored: down"


def test_unvalidated_decisions_accept_every_update() -> None:
    updates = [
        PolicyUpdate(agent_id="a", method="rewrite", new_policy="p"),
        PolicyUpdate(agent_id="b", method="kept", new_policy="q", error="optimizer down"),
    ]
    first, second = unvalidated_decisions(3, updates)
    assert first.accepted and first.iteration == 3 and first.score is None
    assert not second.accepted and second.reason == "no candidate: optimizer down"


def test_digest_is_stable_and_order_free() -> None:
    assert digest({"a": 1, "b": [1, 2]}) == digest({"b": [1, 2], "a": 1})
    assert digest({"a": 1}) != digest({"a": 2}) and len(digest({})) == 16
