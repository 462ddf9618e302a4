"""The pool's pure rules: Pareto front, parent choice, the best candidate and merges."""

import random

import pytest

from langmarl.trainer.pool.candidates import (
    Candidate,
    best_candidate,
    merge_pair,
    merge_policies,
    pareto_front,
    select_parent,
)


def cand(
    cid: int, tasks: list[float], agents: dict[str, float] | None = None, accepted: bool = True
) -> Candidate:
    return Candidate(
        id=cid,
        iteration=0,
        origin="demonstration",
        parents=[0],
        policies={"a": f"a{cid}", "b": f"b{cid}"},
        score=sum(tasks) / len(tasks),
        task_scores=tasks,
        agent_scores=agents or {},
        accepted=accepted,
    )


def test_the_front_keeps_a_candidate_that_wins_only_one_task() -> None:
    strong = cand(1, [0.9, 0.9, 0.9, 0.1])  # mean 0.70
    niche = cand(2, [0.0, 0.0, 0.0, 1.0])  # mean 0.25, but best on task 3
    dominated = cand(3, [0.8, 0.8, 0.8, 0.1])  # beaten everywhere by `strong`
    front = pareto_front([strong, niche, dominated])
    assert [c.id for c in front] == [1, 2]


def test_refused_and_unscored_candidates_are_not_on_the_front() -> None:
    refused = cand(1, [1.0, 1.0], accepted=False)
    kept = cand(2, [0.5, 0.5])
    assert [c.id for c in pareto_front([refused, kept])] == [2]
    assert best_candidate([refused, kept]) == kept
    assert pareto_front([]) == [] and best_candidate([]) is None


def test_parents_are_drawn_by_tasks_won() -> None:
    wide, narrow = cand(1, [1.0, 1.0, 1.0, 0.0]), cand(2, [0.0, 0.0, 0.0, 1.0])
    rng = random.Random(0)
    picks = [select_parent([wide, narrow], rng).id for _ in range(2000)]
    assert 0.7 < picks.count(1) / len(picks) < 0.8  # 3 wins against 1
    with pytest.raises(ValueError, match="front is empty"):
        select_parent([], rng)


def test_the_best_is_the_highest_mean_and_the_oldest_on_ties() -> None:
    assert best_candidate([cand(1, [0.5]), cand(2, [0.7]), cand(3, [0.7])]).id == 2


def test_a_merge_takes_each_agent_from_the_better_parent() -> None:
    first = cand(1, [0.6], {"a": 0.5, "b": 0.1})
    second = cand(2, [0.6], {"a": 0.2, "b": 0.4})
    merged, taken = merge_policies(first, second)
    assert merged == {"a": "a1", "b": "b2"} and taken == ["b"]
    assert merge_pair([first, second], random.Random(0)) == (first, second)


def test_without_agent_scores_a_merge_follows_the_means() -> None:
    merged, taken = merge_policies(cand(1, [0.2]), cand(2, [0.8]))
    assert merged == {"a": "a2", "b": "b2"} and taken == ["a", "b"]


def test_no_merge_pair_when_a_merge_equals_a_parent() -> None:
    better = cand(2, [0.8], {"a": 0.5, "b": 0.5})
    assert merge_pair([cand(1, [0.2], {"a": 0.1, "b": 0.1}), better], random.Random(0)) is None


def test_the_gate_accepts_a_child_not_below_its_parent() -> None:
    from langmarl.trainer.decisions import TeamScore
    from langmarl.trainer.pool.candidates import from_score, gate

    parent = cand(0, [0.5, 0.5])
    child = from_score(1, 0, "demonstration", [0], {"a": "x", "b": "y"},
                       TeamScore(score=0.5, rewards=[0.5, 0.5]), ["a"], "tie")  # fmt: skip
    assert gate(child, parent).accepted  # ties keep training moving
    lower = child.model_copy(update={"score": 0.4})
    assert (
        not gate(lower, parent).accepted
        and "0.400 < parent 0's 0.500" in gate(lower, parent).reason
    )
    failed = from_score(2, 0, "merge", [0, 1], {"a": "x", "b": "y"},
                        TeamScore(error="2 of 2 validation episodes failed"), [], "")  # fmt: skip
    assert not failed.accepted
    assert gate(failed, parent).reason.startswith("not scored: 2 of 2")
