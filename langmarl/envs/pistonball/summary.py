"""What the critic sees of a Pistonball episode: a few segments per piston or region (pure).

An episode has up to ``pistons x max_cycles`` decisions (2,500 at the reference scale), far
more than a critic's context holds. So the trajectory's steps are summaries: the cycles are
cut into at most ``segments`` runs of consecutive cycles, and each group (one piston, or
one region of contiguous pistons) gets one step per run saying how often it went up, down or
stayed, how many replies were unreadable, how its height and the ball moved, the team reward
of the run and one example reply. The prompt then grows with groups x segments only.

The full per-cycle record is kept in the trajectory's metadata as a compact log
(:func:`compact_log`, no texts), from which :func:`records_from_log` rebuilds what a
summary needs, e.g. to summarise the same episode by region.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from typing import Any

from langmarl.core.records import AgentId, Step
from langmarl.envs.pistonball.actions import move_name
from langmarl.envs.pistonball.episode import CycleRecord
from langmarl.envs.pistonball.physics import MAX_HEIGHT

Groups = dict[AgentId, list[int]]
"""Group id → the indices of its pistons (a piston alone, or a region)."""
EXAMPLE_CHARS = 40
"""Example replies are cut to this length."""


def piston_groups(num_pistons: int) -> Groups:
    """One group per piston, keyed by its id."""
    return {f"piston_{i}": [i] for i in range(num_pistons)}


def region_groups(num_pistons: int, region_size: int) -> Groups:
    """Contiguous regions of ``region_size`` pistons from the left wall (``region_0``, …);
    the last may be smaller."""
    starts = range(0, num_pistons, region_size)
    return {
        f"region_{k}": list(range(s, min(s + region_size, num_pistons)))
        for k, s in enumerate(starts)
    }


def segment_bounds(num_cycles: int, segments: int) -> list[tuple[int, int]]:
    """``[start, end)`` indices cutting ``num_cycles`` into at most ``segments`` near-equal
    runs (fewer when there are fewer cycles)."""
    count = max(1, min(segments, num_cycles))
    edges = [round(k * num_cycles / count) for k in range(count + 1)]
    return [(a, b) for a, b in itertools.pairwise(edges) if b > a]


def _counts(moves: list[float]) -> str:
    counted = Counter(move_name(m) for m in moves)
    return ", ".join(f"{name} {counted[name]}" for name in ("up", "stay", "down"))


def _side(offset: float, who: str) -> str:
    if abs(offset) < 0.5:
        return f"over {who}"
    return f"{abs(offset):.1f} pistons {'left' if offset < 0 else 'right'} of {who}"


def _example(run: Sequence[CycleRecord], members: list[int]) -> str:
    """A reply of the run: the first unreadable one if any, else the first."""
    replies = [(i in c.failed, c.replies[i]) for c in run if c.replies for i in members]
    if not replies:
        return ""
    text = next((r for bad, r in replies if bad), replies[0][1]).strip().replace("\n", " ")
    text = text if len(text) <= EXAMPLE_CHARS else text[:EXAMPLE_CHARS] + "…"
    return f"; reply e.g. {text!r}"


def describe_run(
    run: Sequence[CycleRecord],
    members: list[int],
    *,
    before_heights: list[int],
    before_ball: float,
    continuous: bool = False,
) -> str:
    """One group's behaviour over ``run`` (consecutive cycles) as one line."""
    moves = [c.moves[i] for c in run for i in members]
    failures = sum(1 for c in run for i in members if i in c.failed)
    first, last = run[0].cycle, run[-1].cycle
    single = len(members) == 1
    start_h = sum(before_heights[i] for i in members) / len(members)
    end_h = sum(run[-1].heights[i] for i in members) / len(members)
    centre = sum(members) / len(members) + 0.5
    who = "you" if single else "the region's centre"
    height = (
        f"height {start_h:.0f} -> {end_h:.0f}"
        if single
        else (f"mean height {start_h:.1f} -> {end_h:.1f}")
    )
    parts = [
        f"cycles {first}-{last}: {_counts(moves)}",
        f"mean move {sum(moves) / len(moves):+.2f}" if continuous else "",
        f"{failures} unreadable replies (taken as stay)" if failures else "",
        f"{height} of {MAX_HEIGHT}",
        f"ball centre {before_ball:.1f} -> {run[-1].ball_x:.1f} pistons from the wall, ending "
        + _side(run[-1].ball_x - centre, who),
        f"team reward {sum(c.reward for c in run):+.1f}",
    ]
    if not single:
        parts[0] = f"pistons {members[0]}-{members[-1]}, {parts[0]}"
    return "; ".join(p for p in parts if p) + _example(run, members)


def summarise(
    records: Sequence[CycleRecord],
    groups: Groups,
    *,
    segments: int,
    start_heights: list[int],
    start_ball: float,
    continuous: bool = False,
) -> list[Step]:
    """The critic's steps: for each segment, one per group (see the module docstring)."""
    steps: list[Step] = []
    for a, b in segment_bounds(len(records), segments):
        run = records[a:b]
        before = records[a - 1] if a else None
        heights = before.heights if before else start_heights
        ball = before.ball_x if before else start_ball
        for group, members in groups.items():
            failures = sum(1 for c in run for i in members if i in c.failed)
            steps.append(
                Step(
                    agent_id=group,
                    observation=run[0].observations[members[0]] if run[0].observations else "",
                    action=describe_run(
                        run,
                        members,
                        before_heights=heights,
                        before_ball=ball,
                        continuous=continuous,
                    ),
                    reward=round(sum(c.reward for c in run), 4),
                    info={"cycles": [run[0].cycle, run[-1].cycle], "parse_failures": failures},
                )
            )
    return steps


def compact_log(records: Sequence[CycleRecord]) -> dict[str, Any]:
    """The per-cycle numbers of an episode, JSON-ready (no observation or reply texts)."""
    return {
        "ball_x": [round(c.ball_x, 3) for c in records],
        "reward": [round(c.reward, 4) for c in records],
        "moves": [c.moves for c in records],
        "failed": [c.failed for c in records],
        "heights": [c.heights for c in records],
    }


def records_from_log(log: dict[str, Any]) -> list[CycleRecord]:
    """Cycle records (without texts) back from :func:`compact_log`'s output."""
    return [
        CycleRecord(
            cycle=k + 1,
            observations=[],
            replies=[],
            moves=list(log["moves"][k]),
            failed=list(log["failed"][k]),
            heights=list(log["heights"][k]),
            ball_x=float(log["ball_x"][k]),
            reward=float(log["reward"][k]),
        )
        for k in range(len(log["ball_x"]))
    ]
